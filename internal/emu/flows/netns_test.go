package flows

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// vethPair is the tests' own network: two namespaces joined by a veth pair, the a→b direction
// shaped by a token bucket (tbf) — the kernel's rate limit, not the emulator's. Nothing is created
// in the root namespace: the browser tests running beside would see a network change.
type vethPair struct {
	a, b *nsHost
}

// newVethPair builds the pair with a→b limited to rate (e.g. "1mbit"); Cleanup removes it.
func newVethPair(t *testing.T, rate string) *vethPair {
	t.Helper()
	requireRoot(t)
	pid := os.Getpid()
	id := fmt.Sprintf("%d%d", pid%100000, time.Now().UnixNano()%1000)
	sub := fmt.Sprintf("10.%d.%d", 200+pid%50, time.Now().UnixNano()%250)
	p := &vethPair{
		a: &nsHost{name: "smda" + id, node: "a", addr: netip.MustParseAddr(sub + ".1")},
		b: &nsHost{name: "smdb" + id, node: "b", addr: netip.MustParseAddr(sub + ".2")},
	}
	t.Cleanup(func() {
		for _, h := range []*nsHost{p.a, p.b} {
			_ = exec.Command("ip", "netns", "del", h.name).Run()
		}
	})
	steps := [][]string{
		{"netns", "add", p.a.name},
		{"netns", "add", p.b.name},
		{"-n", p.a.name, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", p.b.name},
		{"-n", p.a.name, "addr", "add", p.a.addr.String() + "/24", "dev", "va"},
		{"-n", p.b.name, "addr", "add", p.b.addr.String() + "/24", "dev", "vb"},
		{"-n", p.a.name, "link", "set", "va", "up"},
		{"-n", p.b.name, "link", "set", "vb", "up"},
	}
	for _, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(s, " "), err, out)
		}
	}
	if rate != "" {
		// 100 ms of queue at the rate; a burst of a few packets, as a link would pass them.
		tc := []string{"-n", p.a.name, "qdisc", "add", "dev", "va", "root", "tbf", "rate", rate, "burst", "4kb", "latency", "100ms"}
		if out, err := exec.Command("tc", tc...).CombinedOutput(); err != nil {
			t.Fatalf("tc %s: %v: %s", strings.Join(tc, " "), err, out)
		}
	}
	return p
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if testing.Short() {
		t.Skip("needs root (network namespaces); skipped under -short")
	}
	t.Fatal("this test needs root: it builds network namespaces (run as root, or with -short to skip)")
}

// nsHost is an endpoint.Host in a named namespace.
type nsHost struct {
	name, node string
	addr       netip.Addr
}

func (h *nsHost) Name() string     { return h.name }
func (h *nsHost) Node() string     { return h.node }
func (h *nsHost) Addr() netip.Addr { return h.addr }

func (h *nsHost) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.name, name}, args...)...)
}

// Do runs f on a locked thread switched into the namespace. A thread that cannot switch back is
// left locked, so Go ends it instead of reusing it in the wrong namespace.
func (h *nsHost) Do(f func() error) error {
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		orig, e := os.Open("/proc/thread-self/ns/net")
		if e != nil {
			err = e
			return
		}
		defer orig.Close()
		target, e := os.Open("/run/netns/" + h.name)
		if e != nil {
			err = e
			return
		}
		defer target.Close()
		if e := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); e != nil {
			err = fmt.Errorf("setns %s: %w", h.name, e)
			return
		}
		err = f()
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
	}()
	wg.Wait()
	return err
}
