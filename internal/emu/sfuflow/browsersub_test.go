package sfuflow

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// A session whose subscriber is headless Chromium (janus.js against strata's videoroom over the
// emulated path, libwebrtc's own feedback driving strata's allocator) on a free path: getStats'
// frame size names a layer of the session within 5 s, strata has moved the browser to the top
// layer by the end, video arrives at a rate between the base encoding's and the top one's, and
// the per-layer counts hold together: nothing lost on a free path, and media packets of a
// plausible size (strata's probes, which packetsReceived counts, left out).
func TestBrowserSubscriber(t *testing.T) {
	emutest.NeedRoot(t)
	const run = 12 * time.Second
	bin := emutest.BuildStrata(t)
	net := network(t, time.Hour)
	// Encodings of 150 kbit/s (320x180), 400 (640x360) and 1200 (1280x720).
	u := &scenario.SFU{Node: "sfu", Policy: "bwe", Sessions: []scenario.SFUSession{{Name: "s", Subscriber: scenario.SubscriberBrowser,
		Layers: []float64{150e3, 250e3, 800e3}, Path: []string{"pub", "sfu", "sub"}, Stop: run}}}
	rec := emutest.NewRecorder()
	net.Start(rec.T0)
	ss := startSession(t, bin, net, u, rec, 60*time.Second)
	up := rec.Now()
	t.Logf("session up at %v", up.Round(time.Millisecond))
	if !waitFor(5*time.Second, func() bool { return ss.Forwarding()["s"] > 0 }) {
		t.Fatalf("getStats named no layer of the session within 5 s of media (sizes 320x180, 640x360, 1280x720)")
	}
	time.Sleep(run - rec.Now())
	layer := ss.Forwarding()["s"]
	if err := ss.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	sum := ss.Summaries()
	t.Logf("last layer %d; summary %s", layer, summaryText(sum))
	if layer != 3 {
		t.Errorf("the browser receives layer %d at the end of %v on a free path, want the top (3)", layer, run)
	}
	var sent, lost, recv, payload int64
	var good float64
	for i, l := range sum[0].Layers {
		sent, lost, good = sent+l.Sent, lost+l.Lost, good+l.GoodputBps
		st := ss.Stats()[0].Layers[i]
		recv, payload = recv+st.Received, payload+st.GoodputBytes
		if l.Lost < 0 || l.Lost > l.Sent {
			t.Errorf("layer %d: lost %d of %d", l.Layer, l.Lost, l.Sent)
		}
	}
	// A layer's goodput is over the session's active time; their sum is the session's.
	rate := float64(rec.Total()) * 8 / (rec.Now() - up).Seconds()
	t.Logf("recorder: %d payload bytes, %.0f bit/s since the session was up; layers' goodput %.0f bit/s", rec.Total(), rate, good)
	if rate < 100e3 || rate > 1.6e6 {
		t.Errorf("goodput %.0f bit/s, want between the base encoding's 150 kbit/s (less libvpx's undershoot) and the top one's 1.2 Mbit/s", rate)
	}
	if sent < 100 || good < 80e3 {
		t.Errorf("%d packets, %.0f bit/s counted per layer: too little for %v of video", sent, good, run-up)
	}
	if lost > sent/100 {
		t.Errorf("%d of %d packets lost on a free path", lost, sent)
	}
	if recv == 0 || payload/recv < 500 {
		t.Errorf("%d media packets received with %d payload bytes: VP8 at 1.2 Mbit/s fills its packets", recv, payload)
	}
}
