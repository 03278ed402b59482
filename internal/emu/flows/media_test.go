package flows

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
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

// timed is one recorder call.
type timed struct {
	at time.Duration
	v  float64
}

// mediaRecorder keeps every sample a media flow records.
type mediaRecorder struct {
	clock endpoint.Clock
	mu    sync.Mutex
	good  []timed
	tgt   []timed
	rtt   []timed
}

func (r *mediaRecorder) add(s *[]timed, v float64) {
	r.mu.Lock()
	*s = append(*s, timed{r.clock.Now(), v})
	r.mu.Unlock()
}

func (r *mediaRecorder) Goodput(bytes int)     { r.add(&r.good, float64(bytes)) }
func (r *mediaRecorder) Target(bps float64)    { r.add(&r.tgt, bps) }
func (r *mediaRecorder) Cwnd(float64)          {}
func (r *mediaRecorder) RTT(rtt time.Duration) { r.add(&r.rtt, rtt.Seconds()) }

// rate is the goodput in bit/s over [from, to).
func (r *mediaRecorder) rate(from, to time.Duration) float64 {
	sum, _ := r.sum(&r.good, from, to)
	return sum * 8 / (to - from).Seconds()
}

// mean is the mean of the samples in [from, to) and their number.
func (r *mediaRecorder) mean(ss *[]timed, from, to time.Duration) (float64, int) {
	sum, n := r.sum(ss, from, to)
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

func (r *mediaRecorder) sum(ss *[]timed, from, to time.Duration) (float64, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum, n := 0.0, 0
	for _, s := range *ss {
		if s.at >= from && s.at < to {
			sum, n = sum+s.v, n+1
		}
	}
	return sum, n
}

func mediaSpec(name, ccName string, stop time.Duration) scenario.Flow {
	return scenario.Flow{Name: name, Kind: scenario.KindMedia, CC: ccName, Stop: stop, Codec: sim.DefaultCodecConfig(),
		PacketSize: 1200, Path: []string{"a", "b"}, ReversePath: []string{"b", "a"}}
}

// mediaPath is the tests' path: 1 Mbit/s each way with 20 ms one-way delay and a 25-packet drop-tail
// queue (about 200 ms of 1200-byte packets; probes' small padding packets take slots too).
func mediaPath(t *testing.T) (src, dst endpoint.Host) {
	return newPair(t, 1e6, 20*time.Millisecond, 25)
}

// runMedia runs one media flow from src to dst for the spec's duration and returns its recording.
func runMedia(t *testing.T, src, dst endpoint.Host, spec scenario.Flow) (*mediaRecorder, *Media) {
	t.Helper()
	t0 := time.Now()
	before := runtime.NumGoroutine()
	clock := runClock{t0}
	rec := &mediaRecorder{clock: clock}
	f, err := NewMedia(endpoint.Env{Spec: spec, Src: src, Dst: dst, Rec: rec, Clock: clock, Seed: 1,
		Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), spec.Stop+30*time.Second)
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(t0.Add(spec.Stop)))
	if err := f.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	goroutinesBack(t, before)
	return rec, f.(*Media)
}

// A GCC flow through a 1 Mbit/s bottleneck uses most of it, and its target settles near it: the
// real Pion stack (SRTP, TWCC from Pion's receiver) driving the simulator's controller.
func TestMediaGCCFillsLink(t *testing.T) {
	const dur = 10 * time.Second
	src, dst := mediaPath(t)
	rec, _ := runMedia(t, src, dst, mediaSpec("gcc", "gcc", dur))
	good := rec.rate(5*time.Second, dur)
	tgt, nt := rec.mean(&rec.tgt, 5*time.Second, dur)
	rtt, nrtt := rec.mean(&rec.rtt, 0, dur)
	t.Logf("5–10 s: goodput %.0f kbit/s, mean target %.0f kbit/s (%d samples); mean RTT %.1f ms (%d samples); "+
		"0–10 s goodput %.0f kbit/s", good/1e3, tgt/1e3, nt, rtt*1e3, nrtt, rec.rate(0, dur)/1e3)
	// Payload alone: headers, the SRTP tag and probes take another 6 % or so of the link.
	if good < 0.7e6 {
		t.Errorf("goodput over the last 5 s is %.0f kbit/s, want at least 70%% of the 1 Mbit/s link", good/1e3)
	}
	if tgt < 0.6e6 || tgt > 1.3e6 {
		t.Errorf("mean target over the last 5 s is %.0f kbit/s, want it to follow the 1 Mbit/s link (0.6–1.3 Mbit/s)", tgt/1e3)
	}
	if nrtt == 0 || rtt < 0.04 {
		t.Errorf("RTT: %d samples, mean %.1f ms; want samples of at least the 40 ms path", nrtt, rtt*1e3)
	}
}

// The receive-side controllers run: NADA's receiver computes its signal and sends it back in an
// STRX RTCP packet; GCC's draft receiver sends REMB and the sender's loss controller reads RTCP
// receiver reports.
func TestMediaReceiveSide(t *testing.T) {
	for _, ccName := range []string{"nada", "gcc-draft"} {
		t.Run(ccName, func(t *testing.T) {
			const dur = 4 * time.Second
			src, dst := mediaPath(t)
			rec, m := runMedia(t, src, dst, mediaSpec(ccName, ccName, dur))
			good := rec.rate(0, dur)
			tgt, n := rec.mean(&rec.tgt, 2*time.Second, dur)
			t.Logf("goodput %.0f kbit/s, mean target 2-4 s %.0f kbit/s (%d samples), %d receive-side reports, %d loss reports",
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

func TestMediaBadSpec(t *testing.T) {
	clock := runClock{time.Now()}
	var h endpoint.Host = idleHost{}
	for _, c := range []struct {
		name string
		edit func(*scenario.Flow)
		want string
	}{
		{"unknown controller", func(f *scenario.Flow) { f.CC = "nope" }, "unknown media controller"},
		{"tcp controller", func(f *scenario.Flow) { f.CC = "cubic" }, "unknown media controller"},
		{"bad parameter", func(f *scenario.Flow) { f.Params = sim.Params{"nope": {}} }, "unknown parameter"},
		{"ecn", func(f *scenario.Flow) { f.ECN = true }, "ecn is not emulated"},
		{"tiny packets", func(f *scenario.Flow) { f.PacketSize = 60 }, "leaves no room"},
		{"jumbo packets", func(f *scenario.Flow) { f.PacketSize = 9000 }, "MTU"},
	} {
		spec := mediaSpec("x", "gcc", time.Second)
		c.edit(&spec)
		_, err := NewMedia(endpoint.Env{Spec: spec, Src: h, Dst: h, Rec: &mediaRecorder{clock: clock}, Clock: clock})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// idleHost stands in for a host in tests that build a flow without running it.
type idleHost struct{}

func (idleHost) Name() string                                         { return "" }
func (idleHost) Node() string                                         { return "" }
func (idleHost) Addr() netip.Addr                                     { return netip.Addr{} }
func (idleHost) Do(func() error) error                                { return errors.New("idle host") }
func (idleHost) Command(context.Context, string, ...string) *exec.Cmd { return nil }
