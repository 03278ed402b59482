package sfuflow

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// nsHost is a test host: a namespace of its own behind a router namespace (a plain veth, no
// emulation), standing in for the engine's topo hosts.
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

// Do switches a locked thread into the namespace and back; a thread that cannot switch back is
// left locked, so Go ends it with the goroutine instead of reusing it.
func (h *nsHost) Do(f func() error) error {
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer self.Close()
	target, err := os.Open("/run/netns/" + h.name)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("setns %s: %w", h.name, err)
	}
	ferr := f()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns back: %w", err) // the thread stays locked and dies
	}
	runtime.UnlockOSThread()
	return ferr
}

// star is a router namespace with one host per name, each on its own /24 (10.<n>.<i>.0).
type star struct {
	t      *testing.T
	router string
	hosts  map[string]*nsHost
	ifOf   map[string]string // host → the router's interface towards it
}

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func newStar(t *testing.T, names ...string) *star {
	if os.Geteuid() != 0 {
		t.Fatal("sfuflow's tests build network namespaces: run them as root (sudo go test), or with -short to leave them out")
	}
	pid := os.Getpid()
	s := &star{t: t, router: fmt.Sprintf("sft%d-r", pid), hosts: map[string]*nsHost{}, ifOf: map[string]string{}}
	sh(t, "ip", "netns", "add", s.router)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", s.router).Run() })
	sh(t, "ip", "-n", s.router, "link", "set", "lo", "up")
	sh(t, "ip", "netns", "exec", s.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	for i, name := range names {
		h := &nsHost{name: fmt.Sprintf("sft%d-%s", pid, name), node: name,
			addr: netip.AddrFrom4([4]byte{10, 211, byte(i + 1), 2})}
		sh(t, "ip", "netns", "add", h.name)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", h.name).Run() })
		rif, hif := fmt.Sprintf("r%d", i), "eth0"
		// Created inside the namespaces: nothing in the root namespace changes.
		sh(t, "ip", "-n", s.router, "link", "add", rif, "type", "veth", "peer", "name", hif, "netns", h.name)
		sh(t, "ip", "-n", s.router, "addr", "add", fmt.Sprintf("10.211.%d.1/24", i+1), "dev", rif)
		sh(t, "ip", "-n", s.router, "link", "set", rif, "up")
		sh(t, "ip", "-n", h.name, "addr", "add", h.addr.String()+"/24", "dev", hif)
		sh(t, "ip", "-n", h.name, "link", "set", hif, "up")
		sh(t, "ip", "-n", h.name, "link", "set", "lo", "up")
		sh(t, "ip", "-n", h.name, "route", "add", "default", "via", fmt.Sprintf("10.211.%d.1", i+1))
		s.hosts[name], s.ifOf[name] = h, rif
	}
	return s
}

// limit caps what the router sends towards host (tbf: rate in kbit/s, a 100 ms queue).
func (s *star) limit(host string, kbps int) {
	sh(s.t, "tc", "-n", s.router, "qdisc", "replace", "dev", s.ifOf[host], "root", "tbf",
		"rate", fmt.Sprintf("%dkbit", kbps), "burst", "16kb", "latency", "100ms")
}
