package browser

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nsHost is a leaf namespace of the test's own two-namespace fixture (endpoint.Host).
type nsHost struct {
	name string
	addr netip.Addr
}

func (h *nsHost) Name() string     { return h.name }
func (h *nsHost) Node() string     { return h.name }
func (h *nsHost) Addr() netip.Addr { return h.addr }

func (h *nsHost) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.name, name}, args...)...)
}

// Do runs f on a locked thread switched into the namespace; a thread that cannot switch back is
// never reused (its goroutine ends still locked to it).
func (h *nsHost) Do(f func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- err
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join("/var/run/netns", h.name))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- err
			return
		}
		ferr := f()
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- ferr
	}()
	return <-ch
}

// pairFixture makes two namespaces joined by a veth, with a tbf of rate on a's side (a → b),
// all created with `ip -n`/`tc -n`: nothing is ever added to the root namespace, where other
// tests' browsers would see a network change. Removed when the test ends.
func pairFixture(t *testing.T, rate string) (a, b *nsHost) {
	t.Helper()
	requireRoot(t)
	id := os.Getpid() % 100000
	a = &nsHost{name: fmt.Sprintf("sbr%da", id), addr: netip.MustParseAddr("10.231.0.1")}
	b = &nsHost{name: fmt.Sprintf("sbr%db", id), addr: netip.MustParseAddr("10.231.0.2")}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		for _, h := range []*nsHost{a, b} {
			_ = exec.Command("ip", "netns", "del", h.name).Run()
		}
	})
	run("ip", "netns", "add", a.name)
	run("ip", "netns", "add", b.name)
	run("ip", "-n", a.name, "link", "add", "v0", "type", "veth", "peer", "name", "v1", "netns", b.name)
	for _, h := range []struct {
		h   *nsHost
		dev string
	}{{a, "v0"}, {b, "v1"}} {
		run("ip", "-n", h.h.name, "addr", "add", h.h.addr.String()+"/24", "dev", h.dev)
		run("ip", "-n", h.h.name, "link", "set", h.dev, "up")
		run("ip", "-n", h.h.name, "link", "set", "lo", "up")
	}
	run("tc", "-n", a.name, "qdisc", "add", "dev", "v0", "root", "tbf", "rate", rate, "burst", "6kb", "latency", "200ms")
	return a, b
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if testing.Short() {
		t.Skip("-short: browser flows need root (network namespaces)")
	}
	t.Fatal("browser flows run Chromium in network namespaces: run the tests as root (or with -short to leave them out)")
}

// recorder keeps what a flow records, stamped with the time since the test's start.
type recorder struct {
	mu      sync.Mutex
	start   time.Time
	goodput []sample
	target  []sample
	rtt     []sample
}

type sample struct {
	at time.Duration
	v  float64
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

func (r *recorder) add(s *[]sample, v float64) {
	r.mu.Lock()
	*s = append(*s, sample{time.Since(r.start), v})
	r.mu.Unlock()
}

func (r *recorder) Goodput(bytes int)     { r.add(&r.goodput, float64(bytes)) }
func (r *recorder) Target(bps float64)    { r.add(&r.target, bps) }
func (r *recorder) Cwnd(float64)          {}
func (r *recorder) RTT(rtt time.Duration) { r.add(&r.rtt, rtt.Seconds()) }
func (r *recorder) Now() time.Duration    { return time.Since(r.start) }

// bytesBetween sums the goodput recorded in [from, to).
func (r *recorder) bytesBetween(from, to time.Duration) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n float64
	for _, s := range r.goodput {
		if s.at >= from && s.at < to {
			n += s.v
		}
	}
	return n
}
