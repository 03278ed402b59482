package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/probe"
	"github.com/strata-rtc/strata/internal/rig"
)

var allProbes = []string{"battery", "burst", "cycles", "abandoned", "flood", "oversized", "slow", "sigterm", "fanout"}

// chaosProbe is one named probe; it starts the servers it needs and returns its table rows.
type chaosProbe struct {
	name string
	run  func(ctx context.Context, c config, ns *rig.Netns, log io.Writer) ([]row, error)
}

func probes() []chaosProbe {
	return []chaosProbe{
		{"battery", apiProbe(batteryProbe)},
		{"burst", apiProbe(burstProbe)},
		{"cycles", apiProbe(cyclesProbe)},
		{"abandoned", apiProbe(abandonedProbe)},
		{"flood", apiProbe(floodProbe)},
		{"oversized", apiProbe(oversizedProbe)},
		{"slow", apiProbe(slowProbe)},
		{"sigterm", sigtermProbe},
		{"fanout", fanoutProbe},
	}
}

// server is a running target as the API probes see it.
type server struct {
	name, base, ws, addr, plugin string
	proc                         *rig.Process
	hostIP                       string
}

// sessionTimeout is strata's session_timeout in the probes, short so that abandoned sessions go
// within the probe.
const sessionTimeout = 5 * time.Second

// apiTarget is strata with both API transports and the echotest, or Janus with the same.
func apiTarget(c config, ns *rig.Netns, name string) rig.Target {
	if name == "janus" {
		return rig.JanusAPITarget(c.Janus, c.JanusLib, "echotest")
	}
	// The probes are many clients from one address: the per-address session limit (probed by the
	// tests) would refuse them.
	return rig.StrataTarget(c.Strata, fmt.Sprintf(`general: {session_timeout: %s, limits: {sessions_per_address: 0}}
transports: {websocket: {enabled: true, listen: "%s:%d"}}
plugins: {echotest: {enabled: true}}
`, sessionTimeout, ns.ServerIP, rig.WSPort))
}

// startServer starts target name fresh in the namespace, so every probe measures from an idle
// server.
func startServer(c config, ns *rig.Netns, name, probeName string) (*server, error) {
	dir, _ := filepath.Abs(filepath.Join(c.out, probeName, name))
	proc, err := rig.Start(apiTarget(c, ns, name), ns, dir)
	if err != nil {
		return nil, err
	}
	return &server{name: name, proc: proc, plugin: "janus.plugin.echotest", hostIP: ns.HostIP,
		addr: fmt.Sprintf("%s:%d", ns.ServerIP, rig.APIPort),
		base: fmt.Sprintf("http://%s:%d/janus", ns.ServerIP, rig.APIPort),
		ws:   fmt.Sprintf("ws://%s:%d/", ns.ServerIP, rig.WSPort)}, nil
}

// outcome is one target's result of a probe: the table cell, whether strata's bound holds, data.
type outcome struct {
	cell string
	pass bool
	data map[string]any
}

// apiProbe runs f on each target, each on a fresh server, and makes one row of the results.
func apiProbe(f func(ctx context.Context, s *server) (string, string, outcome)) func(context.Context, config, *rig.Netns, io.Writer) ([]row, error) {
	return func(ctx context.Context, c config, ns *rig.Netns, log io.Writer) ([]row, error) {
		var r row
		r.Data = map[string]any{}
		for _, t := range c.targets {
			s, err := startServer(c, ns, t, "api")
			if err != nil {
				return nil, err
			}
			name, bound, o := f(ctx, s)
			if !s.proc.Alive() {
				o.cell, o.pass = o.cell+" — DIED", false
			}
			if err := s.proc.Stop(rig.StopGrace); err != nil {
				fmt.Fprintf(log, "chaos: %v\n", err)
			}
			if name != "" {
				r.Probe, r.Bound = name, bound
			}
			r.Data[t] = o.data
			if t == "janus" {
				r.Janus = o.cell
				continue
			}
			r.Strata, r.Pass = o.cell, o.pass
		}
		return []row{r}, nil
	}
}

func batteryProbe(ctx context.Context, s *server) (string, string, outcome) {
	h := probe.BatteryHTTP(ctx, s.base, s.plugin)
	w := probe.BatteryWS(ctx, s.ws, s.plugin)
	cell := fmt.Sprintf("HTTP %d/%d, WS %d/%d answered; serves after: %v", h.Answered, h.Sent, w.Answered, w.Sent,
		h.StillServes && w.StillServes)
	return "bad-input battery (HTTP + WebSocket)", "every request answered, serves after",
		outcome{cell, h.OK() && w.OK(), map[string]any{"http": h, "ws": w}}
}

const burstSize = 10000

func burstProbe(ctx context.Context, s *server) (string, string, outcome) {
	r, err := probe.WSBurst(ctx, s.ws, s.plugin, burstSize, 10*time.Second)
	cell := fmt.Sprintf("%d/%d replies", r.Answered, r.Sent)
	if err != nil {
		cell = err.Error()
	}
	return "WebSocket burst, 10,000 requests on one socket", "10,000 of 10,000 answered",
		outcome{cell, err == nil && r.Sent == burstSize && r.Answered == burstSize, map[string]any{"result": r}}
}

func cyclesProbe(ctx context.Context, s *server) (string, string, outcome) {
	probe.SessionCycles(ctx, s.base, s.plugin, 100, 4) // warm up
	time.Sleep(2 * time.Second)
	before := readProc(s.proc.PID())
	r := probe.SessionCycles(ctx, s.base, s.plugin, 10000, 4)
	time.Sleep(5 * time.Second) // timers and idle connections settle
	after := readProc(s.proc.PID())
	cell := fmt.Sprintf("%d cycles (%d failed); RSS %s; threads %d→%d; fds %d→%d", r.Cycles, r.Failed,
		mb(before.RSS, after.RSS), before.Threads, after.Threads, before.FDs, after.FDs)
	pass := r.Cycles == 10000 && after.FDs <= before.FDs+4 && after.Threads <= before.Threads+4 &&
		after.RSS <= before.RSS+32<<20
	return "10k session create/attach/destroy cycles", "all complete; fds, threads back to baseline (+4), RSS +32 MB at most",
		outcome{cell, pass, map[string]any{"cycles": r, "before": before, "after": after}}
}

func abandonedProbe(ctx context.Context, s *server) (string, string, outcome) {
	if s.name == "janus" {
		return "", "", outcome{cell: "not run (Janus's session_timeout is 60 s)"}
	}
	left, err := probe.AbandonedSessions(ctx, s.base, 200, 3*sessionTimeout)
	cell := fmt.Sprintf("%d of 200 left after %v (session_timeout %v)", left, 3*sessionTimeout, sessionTimeout)
	if err != nil {
		cell = err.Error()
	}
	return "abandoned sessions time out", "0 left after 3× session_timeout",
		outcome{cell, err == nil && left == 0, map[string]any{"left": left}}
}

const floodCandidates = 9000
const floodWindow = 30 * time.Second

func floodProbe(ctx context.Context, s *server) (string, string, outcome) {
	r, err := probe.CandidateFlood(ctx, s.base, s.plugin, s.hostIP, floodCandidates, floodWindow)
	cell := fmt.Sprintf("%d checks in %v to %d candidates", r.Checks, floodWindow, r.Sockets)
	if err != nil {
		cell = err.Error()
	}
	return fmt.Sprintf("candidate flood: %d candidates in one trickle", floodCandidates),
		fmt.Sprintf("at most %d checks in %v", floodBoundValue, floodWindow),
		outcome{cell, err == nil && r.Sockets == floodCandidates && r.Checks <= floodBoundValue, map[string]any{"result": r}}
}

// floodBoundValue is --flood-bound (set by run before the probes).
var floodBoundValue = 1000

func oversizedProbe(ctx context.Context, s *server) (string, string, outcome) {
	base, err := probe.RealOffer()
	if err != nil {
		return "oversized offer", "", outcome{cell: err.Error()}
	}
	before := readProc(s.proc.PID())
	r, _, _, err := probe.SendOffer(ctx, s.base, s.plugin, `{"audio":true}`, probe.GrowOffer(base, 10000), 2*time.Minute)
	after := readProc(s.proc.PID())
	cell := fmt.Sprintf("%d kB offer: answered %v (%d kB) in %v; error %q; RSS %s", r.OfferBytes>>10, r.Answered,
		r.AnswerBytes>>10, r.Took.Round(time.Millisecond), r.Error, mb(before.RSS, after.RSS))
	if err != nil {
		cell = err.Error()
	}
	return "oversized offer: 10,000 m-lines", "refused with an error",
		outcome{cell, err == nil && !r.Answered && r.Error != "", map[string]any{"result": r, "before": before, "after": after}}
}

const slowConns = 200

func slowProbe(ctx context.Context, s *server) (string, string, outcome) {
	sb, err := probe.SlowBody(ctx, s.addr, "/janus", slowConns, 5*time.Second, 60*time.Second)
	nr, nerr := probe.WSNonReader(ctx, s.ws, s.plugin, 20000, 20*time.Second)
	cell := fmt.Sprintf("slow body: %d/%d cut (last at %v); WS non-reader: %d/%d replies, close code %d",
		sb.Cut, sb.Conns, sb.SlowestCut.Round(time.Second), nr.Replies, nr.Sent, nr.CloseCode)
	if err = joinErr(err, nerr); err != nil {
		cell += "; " + err.Error()
	}
	pass := err == nil && sb.Cut == sb.Conns && !nr.Silent()
	return "slow clients (slow-body HTTP, WebSocket non-reader)",
		"every slow body cut within 60 s; no reply lost without a close code",
		outcome{cell, pass, map[string]any{"slow_body": sb, "ws_non_reader": nr}}
}

func joinErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// procStats is a process's resources from /proc.
type procStats struct {
	RSS     int64 `json:"rss_bytes"`
	Threads int   `json:"threads"`
	FDs     int   `json:"fds"`
}

func readProc(pid int) procStats {
	var p procStats
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			p.RSS = n << 10
		case "Threads:":
			p.Threads = int(n)
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	p.FDs = len(fds)
	return p
}

func mb(before, after int64) string {
	return fmt.Sprintf("%.1f→%.1f MB", float64(before)/(1<<20), float64(after)/(1<<20))
}
