package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	strataconfig "github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/rig"
)

// samplesAt builds a call sampled every 250 ms for dur, up at 1000 ms of page time: video at
// videoKbps, a receiver report every second with rtt, half the time bandwidth-limited.
func samplesAt(dur time.Duration, videoKbps float64, rtt float64) *pageState {
	st := &pageState{UpAt: 1000}
	for ms := 1000.0; ms <= 1000+float64(dur.Milliseconds()); ms += 250 {
		el := (ms - 1000) / 1000
		reports := math.Floor(el)
		st.Samples = append(st.Samples, uplinkSample{
			T: ms, VBytes: videoKbps * 1000 / 8 * el, VRtx: videoKbps * 1000 / 8 * el / 100, VPkts: 100 * el, RLost: el,
			PBytes: 1.2 * videoKbps * 1000 / 8 * el, RRttN: reports, RRttSum: reports * rtt, PRttN: math.Floor(el / 2),
			PRttSum: math.Floor(el/2) * rtt / 2, Avail: 400_000, Target: 300_000, FPS: 30, W: 1280, H: 720,
			QLD: map[string]float64{"bandwidth": el / 2, "none": el / 2},
		})
	}
	return st
}

func TestSummarizeTakesTheWindowAfterTheWarmup(t *testing.T) {
	st := samplesAt(40*time.Second, 400, 0.08)
	// A burst before the window must not count.
	for i := range st.Samples {
		if st.Samples[i].T < 1000+5000 {
			st.Samples[i].VBytes /= 2
		}
	}
	s, err := summarize(st, 500, 10*time.Second, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.VideoKbps-400) > 1 || math.Abs(s.Share-0.8) > 0.01 || math.Abs(s.WireShare-0.96) > 0.01 {
		t.Errorf("rates: video %.1f kbit/s share %.3f wire %.3f", s.VideoKbps, s.Share, s.WireShare)
	}
	if s.RTTCount < 19 || s.RTTCount > 21 || math.Abs(s.RTTP50-80) > 0.01 || math.Abs(s.RTTP95-80) > 0.01 {
		t.Errorf("RTT: %d measurements, p50 %.2f p95 %.2f", s.RTTCount, s.RTTP50, s.RTTP95)
	}
	if s.PairRTTCount < 9 || math.Abs(s.PairRTTP50-40) > 0.01 {
		t.Errorf("pair RTT: %d measurements, p50 %.2f", s.PairRTTCount, s.PairRTTP50)
	}
	if math.Abs(s.RtxPct-1) > 0.01 || math.Abs(s.LossPct-1) > 0.01 || math.Abs(s.BWLimitedPct-50) > 0.5 {
		t.Errorf("rtx %.2f %% loss %.2f %% bandwidth-limited %.1f %%", s.RtxPct, s.LossPct, s.BWLimitedPct)
	}
	if s.AvailKbps != 400 || s.TargetKbps != 300 || s.Resolution != "1280x720" {
		t.Errorf("available %.0f target %.0f resolution %s", s.AvailKbps, s.TargetKbps, s.Resolution)
	}
}

func TestSummarizeRefusesAShortCall(t *testing.T) {
	if _, err := summarize(samplesAt(15*time.Second, 400, 0.08), 500, 10*time.Second, 20*time.Second); err == nil {
		t.Error("a call that ended 5 s into a 20 s window was summarized")
	}
}

func TestRTTMeasurementsFromCounters(t *testing.T) {
	// No report yet, then one of 40 ms, then two in one sample totalling 100 ms.
	var got []float64
	got = appendMeasurements(got, 0, 0, 0, 0)
	got = appendMeasurements(got, 0, 1, 0, 0.040) // the first report: no previous counters to diff with
	got = appendMeasurements(got, 1, 2, 0.040, 0.080)
	got = appendMeasurements(got, 2, 4, 0.080, 0.180)
	want := []float64{40, 50, 50}
	if len(got) != len(want) {
		t.Fatalf("measurements %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("measurements %v, want %v", got, want)
		}
	}
	if p := percentile([]float64{5, 1, 4, 2, 3}, 50); p != 3 {
		t.Errorf("p50 %v", p)
	}
	if p := percentile([]float64{5, 1, 4, 2, 3}, 95); p != 5 {
		t.Errorf("p95 %v", p)
	}
	if p := percentile(nil, 50); p != -1 {
		t.Errorf("p50 of nothing %v", p)
	}
}

func TestQueueDelayAndDrops(t *testing.T) {
	q, err := rig.ParseQueue([]byte(`[{"kind":"tbf","handle":"8002:","root":true,"options":{"rate":62500,"burst":2999,"lat":500001},` +
		`"bytes":100,"packets":1000,"drops":10,"overlimits":5,"requeues":0,"backlog":6250,"qlen":5}]`))
	if err != nil {
		t.Fatal(err)
	}
	if q.Rate != 62500 || q.Backlog != 6250 || q.Packets != 1000 || q.Drops != 10 {
		t.Fatalf("parsed %+v", q)
	}
	if _, err := rig.ParseQueue([]byte(`[{"kind":"noqueue"}]`)); err == nil {
		t.Error("no tbf, no error")
	}
	t0 := time.Now()
	var qs []rig.QueueSample
	for i := range 20 {
		qs = append(qs, rig.QueueSample{At: t0.Add(time.Duration(i) * 100 * time.Millisecond), Backlog: float64(i) * 625,
			Packets: float64(100 * i), Drops: float64(i), Rate: 62500})
	}
	var s uplinkSummary
	summarizeQueue(&s, qs, t0.Add(time.Second), t0.Add(1900*time.Millisecond)) // samples 10..19: 100..190 ms
	if s.QueueP50 != 140 || s.QueueP95 != 190 {
		t.Errorf("queue p50 %.1f p95 %.1f ms", s.QueueP50, s.QueueP95)
	}
	if math.Abs(s.DropPct-100*9/909.0) > 1e-9 {
		t.Errorf("drops %.3f %%", s.DropPct)
	}
}

func TestUplinkSettings(t *testing.T) {
	if caps, err := parseCaps("250, 500,750"); err != nil || !slices.Equal(caps, []int{250, 500, 750}) {
		t.Errorf("caps %v %v", caps, err)
	}
	for _, bad := range []string{"", "250,x", "0", "-5"} {
		if _, err := parseCaps(bad); err == nil {
			t.Errorf("caps %q accepted", bad)
		}
	}
	if got := strings.Join(rig.TBFArgs(250, 3000, 500*time.Millisecond), " "); got != "tbf rate 250kbit burst 3000 latency 500ms" {
		t.Errorf("tbf %q", got)
	}
}

// TestUplinkServersListenEverywhere checks the uplink's server configurations: strata with the
// echotest, both on every address (the browser's link is a second interface), ICE on the browser's.
func TestUplinkServersListenEverywhere(t *testing.T) {
	dir := t.TempDir()
	path, err := rig.WriteStrataConfig(dir, "", "sb1s", 8088, uplinkStrataYAML, "media: {twcc_interval: 50ms}")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := strataconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Transports.HTTP.Listen != ":8088" || !cfg.Plugins.EchoTest.Enabled || cfg.Media.ICE.Interfaces[0] != "sb1s" ||
		cfg.Media.TWCCInterval != 50*time.Millisecond {
		t.Errorf("strata: listen %q echotest %v ICE %v twcc %v", cfg.Transports.HTTP.Listen, cfg.Plugins.EchoTest.Enabled,
			cfg.Media.ICE.Interfaces, cfg.Media.TWCCInterval)
	}
	lib := t.TempDir()
	for _, f := range []string{"plugins/libjanus_videoroom.so", "plugins/libjanus_echotest.so", "transports/libjanus_http.so"} {
		_ = os.MkdirAll(filepath.Join(lib, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(lib, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jdir := t.TempDir()
	if _, err := rig.JanusPluginTarget("/usr/bin/janus", lib, "echotest").Write(jdir, "", "sb1s", 8088); err != nil {
		t.Fatal(err)
	}
	main, _ := os.ReadFile(filepath.Join(jdir, "janus.jcfg"))
	http, _ := os.ReadFile(filepath.Join(jdir, "janus.transport.http.jcfg"))
	if !strings.Contains(string(main), `disable = "libjanus_videoroom.so"`) || strings.Contains(string(http), "ip =") {
		t.Errorf("janus.jcfg:\n%s\nhttp:\n%s", main, http)
	}
	if _, err := os.Stat(filepath.Join(jdir, "janus.plugin.echotest.jcfg")); err != nil {
		t.Error(err)
	}
}
