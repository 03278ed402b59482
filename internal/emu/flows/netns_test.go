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
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A two-namespace fixture for the flow tests: src and dst joined by one
// veth pair, created with `ip -n` so nothing touches the root namespace
// (browser tests running beside would see a network change), named after
// the pid so parallel runs never clash, removed when the test ends.

var fixtures atomic.Int32

// nsHost is one end of the fixture, an endpoint.Host.
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

// Do runs f on a locked thread switched into the namespace and switches
// back; if switching back fails the thread stays locked, so Go discards it
// rather than reuse a thread in the wrong namespace.
func (h *nsHost) Do(f func() error) error {
	runtime.LockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + h.name)
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
		return fmt.Errorf("back from %s: %w", h.name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// needRoot fails (or, under -short, skips) a test that needs namespaces.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if testing.Short() {
		t.Skip("needs root for network namespaces; not run under -short")
	}
	t.Fatal("this test needs root: it creates network namespaces and veth pairs (run as root, or with -short)")
}

// newPair builds src and dst namespaces joined by a veth pair; rate, when
// set, is a tbf limit (e.g. "20mbit") on src's end, so a bulk flow has a
// bottleneck (a queue, a growing RTT) and does not spin a core at veth speed.
func newPair(t *testing.T, rate string) (src, dst *nsHost) {
	t.Helper()
	needRoot(t)
	n := fixtures.Add(1)
	pfx := fmt.Sprintf("stf%d-%d", os.Getpid(), n)
	ifs := fmt.Sprintf("stf%d%c", os.Getpid()%1000000, 'a'+rune(n%26))
	sub := 1 + int(n)%250
	src = &nsHost{name: pfx + "-s", node: "a", addr: netip.MustParseAddr(fmt.Sprintf("10.251.%d.1", sub))}
	dst = &nsHost{name: pfx + "-d", node: "b", addr: netip.MustParseAddr(fmt.Sprintf("10.251.%d.2", sub))}
	t.Cleanup(func() {
		for _, h := range []*nsHost{src, dst} {
			_ = exec.Command("ip", "netns", "del", h.name).Run()
		}
	})
	steps := [][]string{
		{"netns", "add", src.name},
		{"netns", "add", dst.name},
		{"-n", src.name, "link", "add", ifs + "s", "type", "veth", "peer", "name", ifs + "d", "netns", dst.name},
		{"-n", src.name, "addr", "add", src.addr.String() + "/24", "dev", ifs + "s"},
		{"-n", dst.name, "addr", "add", dst.addr.String() + "/24", "dev", ifs + "d"},
		{"-n", src.name, "link", "set", ifs + "s", "up"},
		{"-n", dst.name, "link", "set", ifs + "d", "up"},
	}
	for _, args := range steps {
		run(t, "ip", args...)
	}
	if rate != "" {
		run(t, "tc", "-n", src.name, "qdisc", "add", "dev", ifs+"s", "root", "tbf", "rate", rate,
			"burst", "32kb", "latency", "50ms")
	}
	return src, dst
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// recorder keeps what a flow records, stamped with the time since it was made.
type recorder struct {
	mu      sync.Mutex
	t0      time.Time
	goodput []sample
	cwnd    []float64
	rtt     []time.Duration
}

type sample struct {
	at    time.Duration
	bytes int
}

func newRecorder() *recorder { return &recorder{t0: time.Now()} }

func (r *recorder) Goodput(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.goodput = append(r.goodput, sample{time.Since(r.t0), n})
}

func (r *recorder) Target(float64) {}

func (r *recorder) Cwnd(b float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cwnd = append(r.cwnd, b)
}

func (r *recorder) RTT(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rtt = append(r.rtt, d)
}

func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.goodput {
		n += s.bytes
	}
	return n
}

func (r *recorder) Now() time.Duration { return time.Since(r.t0) }

// goroutinesBack fails the test unless the goroutine count falls back to
// before within a second: a stopped flow leaves nothing running.
func goroutinesBack(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines after Stop, %d before Start", runtime.NumGoroutine(), before)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
