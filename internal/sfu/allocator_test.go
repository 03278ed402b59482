package sfu

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

type fakeEstimator struct {
	rate atomic.Int64
	loss atomic.Uint64 // per mille, as transport feedback shows it
}

func (e *fakeEstimator) Path() policy.Path {
	return policy.Path{Estimate: cc.Bitrate(e.rate.Load()), FeedbackLoss: float64(e.loss.Load()) / 1000, LossKnown: true}
}

func (e *fakeEstimator) OnUpdate(func()) {}

// liveSource pumps a VP8 simulcast source into a receiver in real time (30 fps) until stopped.
func liveSource(t *testing.T, recv *Receiver, src *vp8Source, mu *sync.Mutex) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Frames are due by the clock, not by ticks: a ticker drops the ticks of a goroutine that
		// a loaded machine schedules late, which would lower the rates the allocator measures.
		const frameInterval = 33 * time.Millisecond
		tick := time.NewTicker(frameInterval)
		defer tick.Stop()
		start, sent := time.Now(), 0
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			for due := int(time.Since(start) / frameInterval); sent < due; sent++ {
				mu.Lock()
				frame := src.nextFrame()
				mu.Unlock()
				for l, pkts := range frame {
					for _, p := range pkts {
						recv.WriteRTP(l, p, Now())
					}
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func TestAllocatorFollowsTheEstimate(t *testing.T) {
	src, srcMu, recv, d := newSimulcastTrack() // ≈ 54k, 198k, 486k at the top temporal layer
	bind := &fakeBinding{rtx: true}
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.Start()
	est := &fakeEstimator{}
	est.rate.Store(int64(10 * cc.Mbps))
	type dec struct {
		at time.Duration
		to Layer
	}
	var mu sync.Mutex
	var decisions []dec
	cfg := DefaultAllocatorConfig()
	// The estimate falls right after the first upgrade here: do not take that for a failed upgrade.
	cfg.Policies.BWE.FailedUpgradeWindow = 100 * time.Millisecond
	alloc, err := NewAllocator(cfg, est, nil, WithObserver(func(x Decision) {
		mu.Lock()
		decisions = append(decisions, dec{x.At, x.To})
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	alloc.Start()
	defer alloc.Close()
	stop := liveSource(t, recv, src, srcMu)
	defer stop()
	alloc.AddTrack(d, DefaultTrackOptions())

	waitFor := func(what string, within time.Duration, ok func(Layer) bool) time.Duration {
		t.Helper()
		start := Now()
		for Now()-start < within {
			if ok(d.Target()) && ok(d.Current()) {
				return Now() - start
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s: target %v current %v after %v (decisions %v)", what, d.Target(), d.Current(), within, decisions)
		return 0
	}
	time.Sleep(time.Second) // the layers are measured and placed
	waitFor("top layer on a 10 Mbit/s estimate", 3*time.Second, func(l Layer) bool { return l == policy.TopLayer })
	mu.Lock()
	if len(decisions) == 0 || decisions[len(decisions)-1].to != policy.TopLayer {
		t.Fatalf("the allocator did not decide the top layer: %v", decisions)
	}
	mu.Unlock()
	if r := recv.Rates(Now()); r[2][2] < 300*cc.Kbps || r[0][2] > 100*cc.Kbps {
		t.Fatalf("measured rates %v, want about 54k, 198k, 486k", r)
	}
	// Without loss an estimate drop first costs temporal layers only; with it, spatial ones too.
	// (The bounds leave room for a loaded machine that runs the source's goroutine late.)
	est.rate.Store(int64(150 * cc.Kbps))
	waitFor("temporal layers down", 2*time.Second, func(l Layer) bool { return l.Spatial == 2 && l.Temporal < 2 })
	est.loss.Store(200)
	took := waitFor("down after the estimate fell to 150 kbit/s with loss", 2*time.Second, func(l Layer) bool {
		r := recv.Rates(Now())
		return l.Spatial >= 0 && r[l.Spatial][l.Temporal] <= 150*cc.Kbps
	})
	t.Logf("target and forwarded layer down %v after the estimate fell", took)
	est.rate.Store(int64(10 * cc.Mbps))
	est.loss.Store(0)
	took = waitFor("back up after the estimate recovered", 3*time.Second, func(l Layer) bool { return l == policy.TopLayer })
	t.Logf("back at the top %v after the estimate recovered", took)
	alloc.RemoveTrack(d)
}

func TestAllocatorProbesWithPadding(t *testing.T) {
	src, srcMu, recv, d := newSimulcastTrack()
	bind := &fakeBinding{rtx: true}
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.Start()
	est := &fakeEstimator{}
	est.rate.Store(int64(100 * cc.Kbps)) // only the base layer fits; the estimate alone never grows
	alloc := startAllocator(t, est)
	defer alloc.Close()
	stop := liveSource(t, recv, src, srcMu)
	defer stop()
	alloc.AddTrack(d, DefaultTrackOptions())
	time.Sleep(2500 * time.Millisecond)
	st := d.Stats()
	if st.PaddingBytes == 0 {
		t.Fatalf("no probe padding sent: %+v", st)
	}
	// A probe succeeds when no congestion shows, so the layer went up beyond the base.
	if st.Target.Spatial == 0 && st.Target.Temporal == 0 {
		t.Fatalf("still at the base layer after probing: %+v", st)
	}
}

// TestAllocatorSkipsSteadyDecisions: a subscriber that gets the best layer on an estimate far
// above it costs a full decision about once per steadyRecheck, not one per tick; a layer that
// appears is still taken up, and a falling estimate still brings the layer down.
func TestAllocatorSkipsSteadyDecisions(t *testing.T) {
	src, srcMu, recv, d := newSimulcastTrack()
	srcMu.Lock()
	src.layers = 2 // the top layer appears later
	srcMu.Unlock()
	if _, err := d.Bind(&fakeBinding{rtx: true}); err != nil {
		t.Fatal(err)
	}
	d.Start()
	est := &fakeEstimator{}
	est.rate.Store(int64(10 * cc.Mbps))
	alloc := startAllocator(t, est)
	defer alloc.Close()
	stop := liveSource(t, recv, src, srcMu)
	defer stop()
	alloc.AddTrack(d, DefaultTrackOptions())

	waitFor := func(what string, within time.Duration, want Layer) {
		t.Helper()
		for start := Now(); Now()-start < within; time.Sleep(10 * time.Millisecond) {
			if d.Target() == want && d.Current() == want {
				return
			}
		}
		t.Fatalf("%s: target %v current %v after %v, want %v", what, d.Target(), d.Current(), within, want)
	}
	waitFor("the best layer there is", 5*time.Second, lay(1, 2))
	time.Sleep(200 * time.Millisecond) // the decision after the switch finds it steady
	before := alloc.fullDecisions.Load()
	time.Sleep(time.Second) // 20 ticks
	if n := alloc.fullDecisions.Load() - before; n > 4 {
		t.Errorf("%d full decisions in a steady second, want about one per %v", n, steadyRecheck)
	}
	srcMu.Lock()
	src.layers = 3
	srcMu.Unlock()
	waitFor("the layer that appeared", 5*time.Second, lay(2, 2))
	est.rate.Store(int64(150 * cc.Kbps))
	for start := Now(); d.Target().Temporal == 2; time.Sleep(10 * time.Millisecond) {
		if Now()-start > 2*time.Second {
			t.Fatalf("target %v 2 s after the estimate fell to 150 kbit/s", d.Target())
		}
	}
}

// startAllocator is a started allocator with the default configuration over est.
func startAllocator(t *testing.T, est Estimator) *Allocator {
	t.Helper()
	alloc, err := NewAllocator(DefaultAllocatorConfig(), est, nil)
	if err != nil {
		t.Fatal(err)
	}
	alloc.Start()
	return alloc
}
