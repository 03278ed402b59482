package agent_test

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/agent"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

const loopback = `name: loopback
nodes: [host, peer]
links:
  - {name: lo-link, from: host, to: peer, capacity: 100Gbps, interface: lo, duplex: true}
`

// blast sends about rate worth of TCP traffic over loopback for d and returns the bytes sent.
func blast(t *testing.T, rate cc.Bitrate, d time.Duration) int64 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(io.Discard, c)
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, rate.BytesIn(10*time.Millisecond))
	var sent int64
	start := time.Now()
	for tick := time.NewTicker(10 * time.Millisecond); time.Since(start) < d; <-tick.C {
		n, err := conn.Write(chunk)
		sent += int64(n)
		if err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	wg.Wait()
	return sent
}

func TestAgentReportsLoopbackCounters(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/lo/statistics/tx_bytes"); err != nil {
		if _, err := os.Stat("/proc/net/dev"); err != nil {
			t.Fatal("neither sysfs nor /proc/net/dev: this test needs Linux interface counters")
		}
	}
	top, err := topo.Parse("loopback.yaml", []byte(loopback))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := netctl.New(top, netctl.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	srv := netctl.NewServer(ctl)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()

	cfg := agent.DefaultConfig()
	cfg.Controller, cfg.Node, cfg.Interfaces, cfg.Interval = ts.URL, "host", []string{"lo"}, 200*time.Millisecond
	a, err := agent.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	// Watch the link while 100 Mbit/s of TCP crosses lo for 1.5 s.
	var mu sync.Mutex
	var maxTx, maxRx cc.Bitrate
	var source string
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			mu.Lock()
			for _, l := range ctl.Links() {
				switch l.Name {
				case "lo-link":
					maxTx, source = max(maxTx, cc.Bitrate(l.LoadBps)), l.Source
				case "lo-link-rev":
					maxRx = max(maxRx, cc.Bitrate(l.LoadBps))
				}
			}
			mu.Unlock()
		}
	}()
	const rate = 100 * cc.Mbps
	const dur = 1500 * time.Millisecond
	sent := blast(t, rate, dur)
	time.Sleep(3 * cfg.Interval) // let the last interval be reported
	close(stop)
	<-watched
	sentRate := cc.BitrateOf(int(sent), dur)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("sent %v over lo; the controller saw up to %v tx, %v rx (source %q)", sentRate, maxTx, maxRx, source)
	if sentRate < 50*cc.Mbps {
		t.Fatalf("only %v of test traffic: the test proves nothing", sentRate)
	}
	// lo counts every byte sent (plus headers and whatever else uses loopback): the reported rate
	// must reach at least half of what the test sent in some interval.
	if maxTx < sentRate/2 || maxRx < sentRate/2 {
		t.Fatalf("controller saw %v tx / %v rx on lo, want at least %v", maxTx, maxRx, sentRate/2)
	}
	if !strings.HasPrefix(source, "agent host/lo") {
		t.Fatalf("link source %q, want the agent", source)
	}
}

func TestAgentConfigErrors(t *testing.T) {
	for _, cfg := range []agent.Config{
		{Controller: "http://127.0.0.1:1", Interval: time.Second},
		{Controller: "http://127.0.0.1:1", Node: "n"},
		{Controller: "not a url", Node: "n", Interval: time.Second},
	} {
		if _, err := agent.New(cfg, nil); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	a, err := agent.New(agent.Config{Controller: "http://127.0.0.1:1", Node: "n", Interval: time.Second, Interfaces: []string{"no-such-iface0"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no-such-iface0") {
		t.Fatalf("missing interface: %v", err)
	}
}

func TestReaderFallsBackToProcNetDev(t *testing.T) {
	dir := t.TempDir()
	proc := filepath.Join(dir, "dev")
	content := "Inter-|   Receive                                                |  Transmit\n" +
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n" +
		"    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n" +
		"  eth0:5000 10 0 0 0 0 0 0 7000 12 0 0 0 0 0 0\n"
	if err := os.WriteFile(proc, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	r := agent.Reader{SysfsRoot: filepath.Join(dir, "missing"), ProcNetDev: proc}
	got, err := r.Read(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["eth0"] != (agent.Counters{RxBytes: 5000, TxBytes: 7000}) {
		t.Fatalf("got %+v, want eth0 only (lo is skipped by default)", got)
	}
	if _, err := r.Read([]string{"wlan0"}); err == nil {
		t.Fatal("missing interface accepted")
	}
	// And sysfs when it is there.
	sys := filepath.Join(dir, "sys")
	if err := os.MkdirAll(filepath.Join(sys, "veth1", "statistics"), 0o700); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(sys, "veth1", "statistics", "rx_bytes"), []byte("42\n"), 0o600)
	_ = os.WriteFile(filepath.Join(sys, "veth1", "statistics", "tx_bytes"), []byte("43\n"), 0o600)
	got, err = agent.Reader{SysfsRoot: sys, ProcNetDev: proc}.Read(nil)
	if err != nil || got["veth1"] != (agent.Counters{RxBytes: 42, TxBytes: 43}) {
		t.Fatalf("sysfs: %+v %v", got, err)
	}
	if _, err := (agent.Reader{SysfsRoot: sys}).Read([]string{"../veth1"}); err == nil {
		t.Fatal("a path in an interface name was accepted")
	}
}

func TestRates(t *testing.T) {
	prev := map[string]agent.Counters{"a": {RxBytes: 1000, TxBytes: 2000}, "b": {RxBytes: 500, TxBytes: 500}}
	cur := map[string]agent.Counters{"a": {RxBytes: 126000, TxBytes: 252000}, "b": {RxBytes: 100, TxBytes: 900}, "c": {}}
	got := agent.Rates(prev, cur, time.Second)
	if r := got["a"]; r[0] != 2*cc.Mbps || r[1] != cc.Mbps {
		t.Errorf("a: %v, want 2 Mbit/s tx, 1 Mbit/s rx", r)
	}
	if _, ok := got["b"]; ok {
		t.Error("b's counters went backwards: it should be skipped")
	}
	if _, ok := got["c"]; ok {
		t.Error("c has no previous reading")
	}
	if len(agent.Rates(prev, cur, 0)) != 0 {
		t.Error("zero interval")
	}
}

func TestParseProcNetDevErrors(t *testing.T) {
	for _, bad := range []string{"", "h1\nh2\n", "h1\nh2\neth0: 1 2 3\n", "h1\nh2\neth0: x 0 0 0 0 0 0 0 1 0\n", "h1\nh2\n: 1 2 3 4 5 6 7 8 9\n", "h1\nh2\ngarbage line\n"} {
		if _, err := agent.ParseProcNetDev([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if real, err := os.ReadFile("/proc/net/dev"); err == nil {
		if got, err := agent.ParseProcNetDev(real); err != nil || len(got) == 0 {
			t.Errorf("this machine's /proc/net/dev: %v", err)
		}
	}
}

func FuzzParseProcNetDev(f *testing.F) {
	f.Add([]byte("Inter-|\n face |\n    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n"))
	f.Add([]byte("a\nb\neth0:1 1 1 1 1 1 1 1 18446744073709551615 1\n"))
	if real, err := os.ReadFile("/proc/net/dev"); err == nil {
		f.Add(real)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := agent.ParseProcNetDev(data)
		if err == nil && len(got) == 0 {
			t.Fatal("success with no interfaces")
		}
	})
}
