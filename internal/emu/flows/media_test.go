package flows

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

// runClock is a run's clock started at its creation.
type runClock struct{ t0 time.Time }

func (c runClock) Now() time.Duration { return time.Since(c.t0) }

// sample is one recorder call.
type sample struct {
	at time.Duration
	v  float64
}

// testRecorder keeps every sample the flow records.
type testRecorder struct {
	clock endpoint.Clock
	mu    sync.Mutex
	good  []sample
	tgt   []sample
	rtt   []sample
}

func (r *testRecorder) add(s *[]sample, v float64) {
	r.mu.Lock()
	*s = append(*s, sample{r.clock.Now(), v})
	r.mu.Unlock()
}

func (r *testRecorder) Goodput(bytes int)     { r.add(&r.good, float64(bytes)) }
func (r *testRecorder) Target(bps float64)    { r.add(&r.tgt, bps) }
func (r *testRecorder) Cwnd(float64)          {}
func (r *testRecorder) RTT(rtt time.Duration) { r.add(&r.rtt, rtt.Seconds()) }

// rate is the goodput in bit/s over [from, to).
func (r *testRecorder) rate(from, to time.Duration) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum := 0.0
	for _, s := range r.good {
		if s.at >= from && s.at < to {
			sum += s.v
		}
	}
	return sum * 8 / (to - from).Seconds()
}

// mean is the mean of the samples in [from, to).
func mean(r *testRecorder, ss *[]sample, from, to time.Duration) (float64, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum, n := 0.0, 0
	for _, s := range *ss {
		if s.at >= from && s.at < to {
			sum, n = sum+s.v, n+1
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

func mediaSpec(name, ccName string, stop time.Duration) scenario.Flow {
	return scenario.Flow{Name: name, Kind: scenario.KindMedia, CC: ccName, Stop: stop, Codec: sim.DefaultCodecConfig(),
		PacketSize: 1200, Path: []string{"a", "b"}, ReversePath: []string{"b", "a"}}
}

// runMedia runs one media flow from a to b for the spec's duration and returns its recording.
func runMedia(t *testing.T, net *vethPair, spec scenario.Flow) (*testRecorder, *Media) {
	t.Helper()
	clock := runClock{time.Now()}
	rec := &testRecorder{clock: clock}
	var log io.Writer = os.Stderr
	f, err := NewMedia(endpoint.Env{Spec: spec, Src: net.a, Dst: net.b, Rec: rec, Clock: clock, Seed: 1, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), spec.Stop+30*time.Second)
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(clock.t0.Add(spec.Stop)))
	if err := f.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	return rec, f.(*Media)
}

// A GCC flow through a 1 Mbit/s bottleneck uses most of it, and its target settles near it: the
// real Pion stack (SRTP, TWCC from Pion's receiver) driving the simulator's controller.
func TestMediaGCCFillsLink(t *testing.T) {
	net := newVethPair(t, "1mbit")
	const dur = 10 * time.Second
	rec, _ := runMedia(t, net, mediaSpec("gcc", "gcc", dur))
	good := rec.rate(5*time.Second, dur)
	tgt, n := mean(rec, &rec.tgt, 5*time.Second, dur)
	rtt, nrtt := mean(rec, &rec.rtt, 0, dur)
	t.Logf("goodput 5-10 s %.0f kbit/s, mean target %.0f kbit/s (%d samples), mean RTT %.1f ms (%d samples), 0-10 s goodput %.0f kbit/s",
		good/1e3, tgt/1e3, n, rtt*1e3, nrtt, rec.rate(0, dur)/1e3)
	if good < 0.7e6 {
		t.Errorf("goodput over the last 5 s is %.0f kbit/s, want at least 70%% of the 1 Mbit/s link", good/1e3)
	}
	if tgt < 0.6e6 || tgt > 1.3e6 {
		t.Errorf("mean target over the last 5 s is %.0f kbit/s, want it to follow the 1 Mbit/s link (0.6–1.3 Mbit/s)", tgt/1e3)
	}
	if nrtt == 0 {
		t.Error("no RTT sample recorded")
	}
}

// The receive-side controllers run: NADA's receiver computes its signal and sends it back in an
// STRX RTCP packet; GCC's draft receiver sends REMB and the sender's loss controller reads RTCP
// receiver reports.
func TestMediaReceiveSide(t *testing.T) {
	for _, ccName := range []string{"nada", "gcc-draft"} {
		t.Run(ccName, func(t *testing.T) {
			net := newVethPair(t, "1mbit")
			const dur = 5 * time.Second
			rec, m := runMedia(t, net, mediaSpec(ccName, ccName, dur))
			good := rec.rate(0, dur)
			tgt, n := mean(rec, &rec.tgt, 3*time.Second, dur)
			t.Logf("goodput %.0f kbit/s, mean target 3-5 s %.0f kbit/s (%d samples), %d receive-side reports, %d loss reports",
				good/1e3, tgt/1e3, n, m.send.rxReports, m.send.lossReports)
			if good < 100e3 || n == 0 {
				t.Errorf("delivered %.0f kbit/s with %d target samples", good/1e3, n)
			}
			if m.send.rxReports == 0 {
				t.Error("no receive-side report reached the sender's controller")
			}
			if ccName == "gcc-draft" && m.send.lossReports == 0 {
				t.Error("no receiver report reached the draft's loss controller")
			}
		})
	}
}

func TestMediaBadController(t *testing.T) {
	clock := runClock{time.Now()}
	h := &nsHost{}
	for _, name := range []string{"nope", "cubic"} {
		_, err := NewMedia(endpoint.Env{Spec: mediaSpec("x", name, time.Second), Src: h, Dst: h,
			Rec: &testRecorder{clock: clock}, Clock: clock})
		if err == nil || !strings.Contains(err.Error(), "unknown media controller") {
			t.Errorf("controller %q: error %v, want unknown media controller", name, err)
		}
	}
}
