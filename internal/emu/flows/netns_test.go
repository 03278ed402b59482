package flows

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/sim"
)

// The flow tests run over the emulator's own network (topo): a source host
// on node a and a destination host on node b, joined by an emulated link each
// way through the user-space link emulator.

// needRoot fails (or, under -short, skips) a test that needs namespaces.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if testing.Short() {
		t.Skip("needs root for network namespaces; not run under -short")
	}
	t.Fatal("this test needs root: it builds an emulated network of namespaces (run as root, or with -short)")
}

// newPair builds the two hosts over a link of rate bit/s each way with a
// one-way delay and a drop-tail queue of queue packets, and returns them;
// the network is removed when the test ends.
func newPair(t *testing.T, rate float64, delay time.Duration, queue int) (src, dst endpoint.Host) {
	t.Helper()
	needRoot(t)
	link := func(name, from, to string) sim.LinkConfig {
		return sim.LinkConfig{Name: name, From: from, To: to, Rate: sim.ConstantRate(rate), Delay: delay,
			Queue: sim.Limit{Unit: sim.LimitPackets, Value: float64(queue)}}
	}
	n, err := topo.Build(context.Background(), topo.Spec{
		Links:    []sim.LinkConfig{link("ab", "a", "b"), link("ba", "b", "a")},
		Hosts:    []topo.HostSpec{{Name: "src", Node: "a"}, {Name: "dst", Node: "b"}},
		Flows:    []topo.FlowSpec{{Name: "f", Src: "src", Dst: "dst", Path: []string{"a", "b"}}},
		Duration: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	n.Start(time.Now())
	return n.Host("src"), n.Host("dst")
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

// nsHost is a host in no network, for constructor checks and benchmarks
// that never send: it cannot enter a namespace or run anything.
type nsHost struct{}

var _ endpoint.Host = (*nsHost)(nil)

func (*nsHost) Name() string          { return "none" }
func (*nsHost) Node() string          { return "none" }
func (*nsHost) Addr() netip.Addr      { return netip.MustParseAddr("10.0.0.1") }
func (*nsHost) Do(func() error) error { return errors.New("a host in no network") }
func (*nsHost) Command(ctx context.Context, _ string, _ ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "false")
}

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
