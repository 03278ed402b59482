package flows

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

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
func runMedia(t *testing.T, src, dst endpoint.Host, spec scenario.Flow) (*emutest.Recorder, *Media) {
	t.Helper()
	before := runtime.NumGoroutine()
	rec := emutest.NewRecorder()
	t0 := rec.T0
	f, err := NewMedia(endpoint.Env{Spec: spec, Src: src, Dst: dst, Rec: rec, Clock: rec, Seed: 1,
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
	good := rec.Rate(5*time.Second, dur)
	tgt, nt := emutest.Mean(rec.Targets(), 5*time.Second, dur)
	rtt, nrtt := emutest.Mean(rec.RTTs(), 0, dur)
	t.Logf("5–10 s: goodput %.0f kbit/s, mean target %.0f kbit/s (%d samples); mean RTT %.1f ms (%d samples); "+
		"0–10 s goodput %.0f kbit/s", good/1e3, tgt/1e3, nt, rtt*1e3, nrtt, rec.Rate(0, dur)/1e3)
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
			good := rec.Rate(0, dur)
			tgt, n := emutest.Mean(rec.Targets(), 2*time.Second, dur)
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
	var h endpoint.Host = emutest.NoHost{}
	rec := emutest.NewRecorder()
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
		_, err := NewMedia(endpoint.Env{Spec: spec, Src: h, Dst: h, Rec: rec, Clock: rec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
