package topo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/sim"
)

// switchedNodes is twoNodes with Open vSwitch at a's end of ab.
func switchedNodes(t *testing.T, dur time.Duration) *Network {
	t.Helper()
	emutest.NeedRoot(t)
	for _, tool := range []string{"ovs-vswitchd", "iperf3", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (scripts/install-deps.sh test installs it)", tool)
		}
	}
	spec := Spec{
		Links: []sim.LinkConfig{
			{Name: "ab", From: "a", To: "b", Rate: sim.ConstantRate(10e6), Delay: 5 * time.Millisecond, Queue: sim.Limit{Unit: sim.LimitPackets, Value: 100}},
			{Name: "ba", From: "b", To: "a", Rate: sim.ConstantRate(100e6), Delay: 5 * time.Millisecond}},
		Switched: []string{"ab"},
		Hosts:    []HostSpec{{"ha", "a"}, {"hb", "b"}},
		Flows:    []FlowSpec{{Name: "f", Src: "ha", Dst: "hb", Path: []string{"a", "b"}}},
		Duration: dur, Interval: 100 * time.Millisecond, Seed: 7,
	}
	n, err := Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// udpProbes sends count probes from one host to another's port and returns how many arrived.
func udpProbes(t *testing.T, from, to *Host, port, count int) int {
	t.Helper()
	rx, err := listenProbes(to, port)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := newProbeSender(from, to, port, 500, 0)
	if err != nil {
		rx.stop()
		t.Fatal(err)
	}
	defer tx.close()
	var stop atomic.Bool
	tx.paced(2e6, count, &stop)
	time.Sleep(200 * time.Millisecond)
	return len(rx.stop())
}

// iperf runs 2 s of reno from ha to hb (reverse: hb to ha) and returns the rate in bit/s.
func iperf(t *testing.T, n *Network, reverse bool) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	srv := n.Host("hb").Command(ctx, "iperf3", "-s", "-1", "-p", "5201")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	time.Sleep(200 * time.Millisecond)
	args := []string{"-c", n.Host("hb").Addr().String(), "-p", "5201", "-t", "2", "-C", "reno", "-f", "m", "-J"}
	if reverse {
		args = append(args, "-R")
	}
	out, err := n.Host("ha").Command(ctx, "iperf3", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
	}
	i := strings.Index(string(out), `"sum_received"`)
	j := strings.Index(string(out)[i:], `"bits_per_second":`)
	if i < 0 || j < 0 {
		t.Fatalf("iperf3 output: %s", out)
	}
	rest := string(out)[i+j+len(`"bits_per_second":`):]
	v, err := strconv.ParseFloat(strings.TrimSpace(rest[:strings.IndexAny(rest, ",}")]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSwitchedLink: a link with Open vSwitch at its source end carries UDP and TCP both ways
// (the reverse over the plain link), its emulator (now at the far end) still counts the flow's
// packets, a drop flow installed in the switch stops the matching packets before the link (which
// never counts them), and Close removes the switch's namespace, daemons and directory.
func TestSwitchedLink(t *testing.T) {
	n := switchedNodes(t, 30*time.Second)
	sws := n.Switches()
	if len(sws) != 1 || sws[0].Node != "a" || len(sws[0].Links) != 1 || sws[0].Links[0] != "ab" || sws[0].Ports[0] != "w0" ||
		!strings.HasPrefix(sws[0].Target, "unix:") || !strings.HasSuffix(sws[0].Target, ".mgmt") {
		t.Fatalf("switches %+v", sws)
	}
	n.Start(time.Now())
	ha, hb := n.hosts["ha"], n.hosts["hb"]
	if got := udpProbes(t, ha, hb, 9000, 100); got != 100 {
		t.Fatalf("UDP a→b through the switch: %d of 100 arrived", got)
	}
	if got := udpProbes(t, hb, ha, 9000, 100); got != 100 {
		t.Fatalf("UDP b→a: %d of 100 arrived", got)
	}
	st, ls := n.FlowStats("f"), n.LinkStats()[0]
	if st.SentPackets != 100 || st.RecvPackets != 100 || ls.TxPackets != 100 {
		t.Fatalf("after 100 probes a→b: flow sent %d received %d, link ab sent %d", st.SentPackets, st.RecvPackets, ls.TxPackets)
	}
	if rate := iperf(t, n, false); rate < 0.8*10e6 {
		t.Errorf("TCP a→b through the switch: %.3g bit/s on a 10 Mbit/s link", rate)
	}
	if rate := iperf(t, n, true); rate < 0.8*10e6 {
		t.Errorf("TCP b→a: %.3g bit/s", rate)
	}
	if c := n.Counters()[0]; c.Oversize > 0 {
		t.Errorf("%d packets over the MTU reached the emulator behind the switch (largest %d B)", c.Oversize, c.MaxSize)
	}

	// A drop flow in the switch: probes to 9001 never reach the link, those to 9000 do.
	sw := n.switches[0].sw
	if err := sw.Client().AddFlow(context.Background(), "priority=100,udp,tp_dst=9001,actions=drop"); err != nil {
		t.Fatal(err)
	}
	before := n.LinkStats()[0].TxPackets
	if got := udpProbes(t, ha, hb, 9001, 50); got != 0 {
		t.Errorf("%d of 50 probes to the dropped port arrived", got)
	}
	if got := udpProbes(t, ha, hb, 9000, 50); got != 50 {
		t.Errorf("%d of 50 probes to another port arrived", got)
	}
	if d := n.LinkStats()[0].TxPackets - before; d != 50 {
		t.Errorf("link ab carried %d packets, want only the 50 the switch let through", d)
	}
	flows, err := sw.Client().DumpFlows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dropped := uint64(0)
	found := false
	for _, f := range flows {
		if f.Priority == 100 {
			dropped, found = f.Packets, true
		}
	}
	if !found || dropped != 50 {
		t.Errorf("the drop flow counted %d packets, want 50 (%+v)", dropped, flows)
	}

	// Close: the switch's namespace, daemons and directory go.
	s := n.switches[0]
	var pids []int
	for _, d := range []string{"ovs-vswitchd", "ovsdb-server"} {
		b, err := os.ReadFile(filepath.Join(s.dir, d+".pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		pids = append(pids, pid)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(namespaces(t), s.ns) {
		t.Errorf("switch namespace %s survived Close", s.ns)
	}
	for _, pid := range pids {
		if unix.Kill(pid, 0) != unix.ESRCH {
			t.Errorf("OVS daemon %d survived Close", pid)
		}
	}
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("switch directory %s survived Close: %v", s.dir, err)
	}
}

// TestReapSwitchDirs: Reap removes a dead run's switch directory and leaves a live run's alone.
func TestReapSwitchDirs(t *testing.T) {
	emutest.NeedRoot(t)
	dead, live := exec.Command("true"), exec.Command("sleep", "30")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	deadDir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-1-ovs0", prefix, dead.Process.Pid))
	liveDir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-1-ovs0", prefix, live.Process.Pid))
	for _, d := range []string{deadDir, liveDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.RemoveAll(liveDir)
	if err := Reap(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Errorf("dead run's %s survived Reap", deadDir)
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("live run's %s: %v", liveDir, err)
	}
}

func TestSwitchedSpecErrors(t *testing.T) {
	emutest.NeedRoot(t)
	link := sim.LinkConfig{Name: "ab", From: "a", To: "b", Rate: sim.ConstantRate(1e6)}
	for _, c := range []struct {
		switched []string
		want     string
	}{{[]string{"xy"}, `switched link "xy" is not a link`}, {[]string{"ab", "ab"}, "switched twice"}} {
		n, err := Build(context.Background(), Spec{Links: []sim.LinkConfig{link}, Switched: c.switched})
		if err == nil {
			n.Close()
			t.Fatalf("built with switched %v", c.switched)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q does not say %q", err, c.want)
		}
	}
}
