package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/rig"
)

// Seed 001's SIP test (§3.3, Fig. 7 and 8): callers join in steps, each a WebRTC client of the
// server's SIP plugin calling an echo service on the SIP side (sipp's UAS with -rtp_echo), and the
// server's CPU, memory and traffic are measured against the number of calls. The paper's echo
// service was Asterisk's echo test; its 330 calls took 22 % of a 16-core machine, linearly. Every
// caller checks that what comes back is its own audio (plan.SIP), so a broken gateway gives no
// figures.
const sipScenario = "sip"

//go:embed sipp-echo-uas.xml
var sippEchoUAS []byte

// sipScale sizes the sip scenario.
type sipScale struct {
	Max, Step int
	Hold      time.Duration
}

var sipScales = map[string]sipScale{
	"small": {Max: 40, Step: 10, Hold: 10 * time.Second},
	"full":  {Max: 200, Step: 20, Hold: 15 * time.Second},
}

func addSIPFlags(fs *flag.FlagSet, s *sipScale) {
	fs.IntVar(&s.Max, "sip-max", 0, "sip: most calls (default: the scale's)")
	fs.IntVar(&s.Step, "sip-step", 0, "sip: calls joining per step")
	fs.DurationVar(&s.Hold, "sip-hold", 0, "sip: hold after each step")
}

// merge returns the scale with the flags that were given.
func (s sipScale) merge(flags sipScale) sipScale {
	if flags.Max > 0 {
		s.Max = flags.Max
	}
	if flags.Step > 0 {
		s.Step = flags.Step
	}
	if flags.Hold > 0 {
		s.Hold = flags.Hold
	}
	return s
}

// sippPort is the echo service's SIP port on the host's end of the veth; its RTP echo port is
// found free at start.
const sippPort = 5090

func sipEchoScenario(s sipScale, server string, ns *rig.Netns) scenario {
	uri := fmt.Sprintf("sip:echo@%s:%d", ns.HostIP, sippPort)
	return scenario{name: sipScenario,
		title:      fmt.Sprintf("SIP gateway: WebRTC callers of an echo service on the SIP side (sipp -rtp_echo), %d at a time, up to %d calls", s.Step, s.Max),
		plans:      []plan.Plan{plan.SIPEcho(server, uri, s.Max, s.Step, s.Hold)},
		strataYAML: fmt.Sprintf("plugins: {sip: {enabled: true, local_ip: %q}}", ns.ServerIP),
		sidecar:    func(dir string) (func() error, error) { return startSippEcho(ns.HostIP, sippPort, dir) },
	}
}

// startSippEcho runs sipp's UAS with RTP echo on ip:port (outside the server's namespace, so
// both legs of every call cross its interface, as they would a gateway's), logging into dir. The
// returned function stops it.
func startSippEcho(ip string, port int, dir string) (func() error, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	xml := filepath.Join(dir, "sipp-echo-uas.xml")
	if err := os.WriteFile(xml, sippEchoUAS, 0o644); err != nil {
		return nil, err
	}
	mp, err := freeMediaPort(ip)
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "sipp.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("sipp", "-sf", xml, "-i", ip, "-p", strconv.Itoa(port), "-bind_local",
		"-mi", ip, "-mp", strconv.Itoa(mp), "-rtp_echo", "-aa", "-nostdin", "-max_socket", "4096",
		"-trace_err", "-error_file", filepath.Join(dir, "sipp-errors.log"),
		"-trace_stat", "-stf", filepath.Join(dir, "sipp-stats.csv"))
	cmd.Stdout, cmd.Stderr = nil, logf // its screen goes nowhere; errors to the log
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("sipp (apt-get install sip-tester): %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	if err := waitUDPBound(ip, port, done); err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("sipp: %w: %s", err, rig.Tail(logf.Name()))
	}
	return func() error {
		_ = cmd.Process.Signal(syscall.SIGINT) // sipp's Ctrl-C: quit now, writing its statistics
		select {
		case <-done:
			return nil
		case <-time.After(3 * time.Second):
		}
		_ = cmd.Process.Kill()
		<-done
		return nil
	}, nil
}

// freeMediaPort finds an even port whose +2 (sipp echoes video there) is free too.
func freeMediaPort(ip string) (int, error) {
	for p := 16000; p < 16400; p += 4 {
		a, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip), Port: p})
		if err != nil {
			continue
		}
		b, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip), Port: p + 2})
		a.Close()
		if err != nil {
			continue
		}
		b.Close()
		return p, nil
	}
	return 0, errors.New("no free RTP echo port in 16000-16400")
}

// waitUDPBound gives sipp time to bind ip:port, then checks it holds it (a probe that binds the
// port means sipp did not).
func waitUDPBound(ip string, port int, exited <-chan error) error {
	select {
	case err := <-exited:
		return fmt.Errorf("exited at start-up (%v)", err)
	case <-time.After(700 * time.Millisecond):
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip), Port: port})
	if err != nil {
		return nil // bound by sipp
	}
	c.Close()
	return fmt.Errorf("did not bind %s:%d", ip, port)
}
