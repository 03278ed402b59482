// Package sipecho runs the SIP side's echo service of the load generator's SIP runs: sipp's UAS
// (Debian's sip-tester) with a scenario that answers every INVITE with Opus at the payload type
// the offer gave it (sipp's built-in uas answers PCMU) and, with -rtp_echo, sends every RTP packet
// back to where it came from. A call lasts until the caller's BYE.
package sipecho

import (
	_ "embed"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

//go:embed uas.xml
var Scenario []byte

// Echo is a running sipp echo service.
type Echo struct {
	// URI is what callers call: sip:echo@IP:PORT.
	URI  string
	cmd  *exec.Cmd
	done chan error
}

// Start runs sipp on ip:port (0: a free port), logging into dir (sipp.log, sipp-errors.log,
// sipp-stats.csv). The caller stops it with Stop.
func Start(ip string, port int, dir string) (*Echo, error) {
	if _, err := exec.LookPath("sipp"); err != nil {
		return nil, errors.New("sipecho: sipp not found (apt-get install sip-tester)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	xml := filepath.Join(dir, "sipp-echo-uas.xml")
	if err := os.WriteFile(xml, Scenario, 0o644); err != nil {
		return nil, err
	}
	var err error
	if port == 0 {
		if port, err = freePort(ip, 0, 1); err != nil {
			return nil, err
		}
	}
	mp, err := freePort(ip, 16000, 400)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "sipp.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("sipp", "-sf", xml, "-i", ip, "-p", strconv.Itoa(port), "-bind_local",
		"-mi", ip, "-mp", strconv.Itoa(mp), "-rtp_echo", "-aa", "-nostdin", "-max_socket", "4096",
		"-trace_err", "-error_file", filepath.Join(dir, "sipp-errors.log"),
		"-trace_stat", "-stf", filepath.Join(dir, "sipp-stats.csv"))
	cmd.Stderr = logf // its screen (stdout) goes nowhere
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("sipecho: %w", err)
	}
	e := &Echo{URI: fmt.Sprintf("sip:echo@%s:%d", ip, port), cmd: cmd, done: make(chan error, 1)}
	go func() { e.done <- cmd.Wait(); logf.Close() }()
	if err := e.waitBound(ip, port); err != nil {
		e.Stop()
		b, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("sipecho: sipp %w: %s", err, strings.TrimSpace(string(b)))
	}
	return e, nil
}

// waitBound gives sipp time to bind ip:port, then checks it holds it (a probe that can bind the
// port means sipp did not).
func (e *Echo) waitBound(ip string, port int) error {
	select {
	case err := <-e.done:
		e.done <- err
		return fmt.Errorf("exited at start-up (%v)", err)
	case <-time.After(700 * time.Millisecond):
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip), Port: port})
	if err != nil {
		return nil
	}
	c.Close()
	return fmt.Errorf("did not bind %s:%d", ip, port)
}

// Stop ends sipp (Ctrl-C: it quits at once, writing its statistics; killed after 3 s).
func (e *Echo) Stop() {
	_ = e.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-e.done:
		e.done <- err
		return
	case <-time.After(3 * time.Second):
	}
	_ = e.cmd.Process.Kill()
	e.done <- <-e.done
}

// freePort finds a free even UDP port on ip from from (0: one the kernel picks) among n tried,
// whose +2 is free too (sipp echoes video there).
func freePort(ip string, from, n int) (int, error) {
	addr := net.ParseIP(ip)
	for i := 0; i < n; i++ {
		a, err := net.ListenUDP("udp4", &net.UDPAddr{IP: addr, Port: from + 4*i})
		if err != nil {
			continue
		}
		p := a.LocalAddr().(*net.UDPAddr).Port
		b, err := net.ListenUDP("udp4", &net.UDPAddr{IP: addr, Port: p + 2})
		a.Close()
		if err != nil {
			continue
		}
		b.Close()
		return p, nil
	}
	return 0, fmt.Errorf("sipecho: no free UDP port on %s", ip)
}
