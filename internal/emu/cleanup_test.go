package emu

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// namespacesOf lists the network namespaces an emulation run by pid has
// (topo names them "se<pid>-...").
func namespacesOf(pid int) []string {
	entries, _ := os.ReadDir("/var/run/netns")
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "se"+strconv.Itoa(pid)+"-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func assertNoNamespaces(t *testing.T, pid int) {
	t.Helper()
	if left := namespacesOf(pid); len(left) > 0 {
		t.Fatalf("namespaces of run %d left behind: %v", pid, left)
	}
}

// processesOf lists the processes running the executable bin (the runs and
// whatever they started of themselves, such as the links' process).
func processesOf(bin string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && exe == bin {
			out = append(out, pid)
		}
	}
	return out
}

func assertNoProcesses(t *testing.T, bin string) {
	t.Helper()
	if !waitFor(2*time.Second, func() bool { return len(processesOf(bin)) == 0 }) {
		t.Fatalf("processes of %s left running: %v", bin, processesOf(bin))
	}
}

func sleepRun(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }

// waitFor polls cond every 50 ms until it holds or the timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

const cleanupScenario = `
name: cleanup
duration: %s
links:
  - {name: l, from: a, to: b, rate: 5Mbps, delay: 5ms, queue: 50pkt, duplex: true}
flows:
  - {name: t, cc: cubic, path: [a, b]}
`

// An emulation interrupted with SIGINT tears everything down and exits; one
// killed with SIGKILL leaves its namespaces, and the next run reaps them
// (and whatever still ran in them).
func TestInterruptedRunCleansUp(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "strata")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/strata").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/strata: %v\n%s", err, out)
	}
	write := func(name, duration string) string {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(strings.Replace(cleanupScenario, "%s", duration, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long, short := write("long", "60s"), write("short", "1s")
	start := func(file string) *exec.Cmd {
		cmd := exec.Command(bin, "lab", "run", "--engine", "emu", "--out", filepath.Join(dir, "out-"+filepath.Base(file)), file)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
		if !waitFor(10*time.Second, func() bool { return len(namespacesOf(cmd.Process.Pid)) > 0 }) {
			t.Fatalf("run %d made no namespaces within 10 s", cmd.Process.Pid)
		}
		return cmd
	}

	cmd := start(long)
	time.Sleep(time.Second) // flows running
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err == nil {
			t.Error("an interrupted run exited with status 0")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not exit within 10 s of SIGINT")
	}
	assertNoNamespaces(t, cmd.Process.Pid)
	assertNoProcesses(t, bin)

	killed := start(long)
	_ = killed.Process.Signal(syscall.SIGKILL)
	_, _ = killed.Process.Wait()
	if len(namespacesOf(killed.Process.Pid)) == 0 {
		t.Fatal("a run killed with SIGKILL left nothing to reap (the test would prove nothing)")
	}
	next := exec.Command(bin, "lab", "run", "--engine", "emu", "--out", filepath.Join(dir, "out-next"), short)
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("the next run: %v\n%s", err, out)
	}
	assertNoNamespaces(t, killed.Process.Pid)
	assertNoNamespaces(t, next.Process.Pid)
	assertNoProcesses(t, bin)
}
