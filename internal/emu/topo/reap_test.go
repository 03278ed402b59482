package topo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/sim"
)

func TestNotRootIsAClearError(t *testing.T) {
	err := checkRootAs(1000)
	if err == nil || !strings.Contains(err.Error(), "needs root") {
		t.Fatalf("got %v", err)
	}
}

func TestSpecErrors(t *testing.T) {
	emutest.NeedRoot(t)
	link := sim.LinkConfig{Name: "ab", From: "a", To: "b", Rate: sim.ConstantRate(1e6)}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Links: []sim.LinkConfig{link}, Hosts: []HostSpec{{"h", "x"}}}, "no link joins"},
		{Spec{Links: []sim.LinkConfig{link}, Hosts: []HostSpec{{"ha", "a"}, {"hb", "b"}},
			Flows: []FlowSpec{{Name: "f", Src: "ha", Dst: "hb", Path: []string{"a", "b"}}}}, "no link from b to a"},
		{Spec{Links: []sim.LinkConfig{link}, Hosts: []HostSpec{{"ha", "a"}, {"hb", "b"}},
			Flows: []FlowSpec{{Name: "f", Src: "ha", Dst: "hb", Path: []string{"b", "a"}, ReversePath: []string{"a", "b"}}}}, "must lead from node a"},
	} {
		n, err := Build(context.Background(), c.spec)
		if err == nil {
			n.Close()
			t.Fatalf("built %+v", c.spec)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Fatalf("error %q does not say %q", err, c.want)
		}
	}
}

func namespaces(t *testing.T) string {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestCloseAndReap: Close removes a network's namespaces (twice is fine);
// Reap removes a dead run's and leaves a live one's alone.
func TestCloseAndReap(t *testing.T) {
	n := twoNodes(t, sim.LinkConfig{Rate: sim.ConstantRate(1e6)}, time.Second)
	ns := n.Host("ha").Name()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if strings.Contains(namespaces(t), ns) {
		t.Fatalf("%s survived Close", ns)
	}
	dead, live := exec.Command("sleep", "30"), exec.Command("sleep", "30")
	for _, c := range []*exec.Cmd{dead, live} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	deadNS := fmt.Sprintf("%s%d-n0-test", prefix, dead.Process.Pid)
	liveNS := fmt.Sprintf("%s%d-n0-test", prefix, live.Process.Pid)
	for _, name := range []string{deadNS, liveNS} {
		if err := ip("netns", "add", name); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _ = ip("netns", "del", liveNS) }()
	_ = dead.Process.Kill()
	_ = dead.Wait()
	if err := Reap(); err != nil {
		t.Fatal(err)
	}
	list := namespaces(t)
	if strings.Contains(list, deadNS) || !strings.Contains(list, liveNS) {
		t.Fatalf("after Reap:\n%s", list)
	}
	if _, err := os.Stat(netnsDir + "/" + deadNS); err == nil {
		t.Fatal("the dead run's namespace is still mounted")
	}
}

// TestKilledRunLeavesNothing: a run killed with SIGKILL leaves namespaces
// (which Reap removes) but no link process and no TUN device: the link
// process sees its parent go and exits, and its devices go with it.
func TestKilledRunLeavesNothing(t *testing.T) {
	if os.Getenv("TOPO_HELPER_RUN") == "1" {
		n := twoNodes(t, sim.LinkConfig{Rate: sim.ConstantRate(1e6)}, time.Minute)
		n.Start(time.Now())
		fmt.Printf("%d\n", n.proc.cmd.Process.Pid)
		time.Sleep(time.Minute)
		return
	}
	emutest.NeedRoot(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledRunLeavesNothing$")
	cmd.Env = append(os.Environ(), "TOPO_HELPER_RUN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var linkPid int
	if _, err := fmt.Fscan(out, &linkPid); err != nil {
		_ = cmd.Process.Kill()
		t.Fatal("helper run:", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for unix.Kill(linkPid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if unix.Kill(linkPid, 0) == nil {
		_ = unix.Kill(linkPid, unix.SIGKILL)
		t.Fatalf("the link process %d outlived its killed parent", linkPid)
	}
	// The killed run's namespaces are left for Reap (another run starting
	// beside this test may reap them first).
	if err := Reap(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(namespaces(t), fmt.Sprintf("%s%d-", prefix, cmd.Process.Pid)) {
		t.Fatal("Reap left the killed run's namespaces")
	}
}

// TestTwoNetworksInOneProcess: `strata lab run --jobs 2` builds networks side by side in one
// process; their namespaces must not clash and each carries its own traffic.
func TestTwoNetworksInOneProcess(t *testing.T) {
	link := sim.LinkConfig{Rate: sim.ConstantRate(2e6), Delay: 2 * time.Millisecond}
	a := twoNodes(t, link, 3*time.Second)
	b := twoNodes(t, link, 3*time.Second)
	if a.Host("ha").Name() == b.Host("ha").Name() {
		t.Fatalf("both networks named their host %s", a.Host("ha").Name())
	}
	for i, n := range []*Network{a, b} {
		n.Start(time.Now())
		if recs := probe(t, n, 500, 1e6, 20, 0, 0); len(recs) != 20 {
			t.Fatalf("network %d: %d of 20 probes arrived", i, len(recs))
		}
	}
}
