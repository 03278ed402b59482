package netctl

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

type meterRecorder struct {
	recordingEnforcer
	meters map[string][]api.Meter
	calls  int
}

func (m *meterRecorder) ApplyMeters(node string, meters []api.Meter) {
	if m.meters == nil {
		m.meters = map[string][]api.Meter{}
	}
	m.meters[node] = meters
	m.calls++
}

// TestControllerReservation: TCP fills the 2 Mbit/s link pm. Without a reservation the controller
// yields and leaves the stream its base layer; with -reserve 0.8 it keeps two layers (1.32 Mbit/s
// with margin, within 1.6) and the switch at paris meters the rest of pm's traffic to
// 2 − 1.32 = 0.68 Mbit/s; the meter goes when the subscription does.
func TestControllerReservation(t *testing.T) {
	for _, reserve := range []float64{0, 0.8} {
		rec := &meterRecorder{}
		c := newTestController(t, func(cfg *Config) { cfg.Reserve = reserve }, WithEnforcer(rec))
		mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
		mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
		c.Update(0)
		now := 5 * time.Second
		mustOK(t, c.SetLinkLoad("pm", mbps(2.6), now)) // 1.2 of ours, 1.4 of TCP
		c.Update(now)
		got := layersAt(t, c, "s")
		m, metered := c.Rules().Meter("paris", "pm")
		if reserve == 0 {
			if got != 1 || metered || rec.calls != 0 || c.Rules().Rules("paris").Meters != nil {
				t.Fatalf("no reservation: %d layers, meter %v %+v, %d meter calls", got, metered, m, rec.calls)
			}
			continue
		}
		if got != 2 {
			t.Fatalf("reserve 0.8: %d layers, want 2", got)
		}
		if ls := linkState(c, "pm"); ls.AvailableBps != 1_600_000 || ls.BackgroundBps != 1_400_000 {
			t.Errorf("link state %+v", ls)
		}
		want := api.Meter{Link: "pm", RateBps: 680_000, BurstBits: DefaultMeterBurst}
		if !metered || m != want {
			t.Fatalf("meter %+v (%v), want %+v", m, metered, want)
		}
		if ms := rec.meters["paris"]; len(ms) != 1 || ms[0] != want {
			t.Fatalf("enforcer got %+v", rec.meters)
		}
		if _, ok := c.Rules().Meter("paris", "ps"); ok {
			t.Error("a link without subscriptions is metered")
		}
		b, _ := json.Marshal(c.Rules().Rules("paris"))
		if !strings.Contains(string(b), `"meters":[{"link":"pm","rate_bps":680000,"burst_bits":500000}]`) {
			t.Errorf("GET /v1/rules body %s", b)
		}
		calls := rec.calls
		c.Update(now + 100*time.Millisecond)
		if rec.calls != calls {
			t.Error("an unchanged meter was applied again")
		}
		mustOK(t, c.DeleteSubscription("s"))
		c.Update(now + 200*time.Millisecond)
		if _, ok := c.Rules().Meter("paris", "pm"); ok || len(rec.meters["paris"]) != 0 {
			t.Errorf("meter left after the subscription went: %+v", rec.meters)
		}
	}
}

// TestReservationOnlyWhereASwitchPolices: the reservation applies to links leaving an enforcer;
// island's link from paris counts, a link from madrid (no switch) does not.
func TestReservationOnlyWhereASwitchPolices(t *testing.T) {
	c := newTestController(t, func(cfg *Config) { cfg.Reserve = 0.5 })
	now := time.Second
	mustOK(t, c.SetLinkLoad("pm", mbps(2), now))
	mustOK(t, c.SetLinkLoad("pm-rev", mbps(2), now))
	c.Update(now)
	if ls := linkState(c, "pm"); ls.AvailableBps != 1_000_000 {
		t.Errorf("pm (from paris, a switch): available %d, want the reserved 1 Mbit/s", ls.AvailableBps)
	}
	if ls := linkState(c, "pm-rev"); ls.AvailableBps != 0 {
		t.Errorf("pm-rev (from madrid, no switch): available %d, want 0", ls.AvailableBps)
	}
}

func TestReservationConfig(t *testing.T) {
	for _, tc := range []struct {
		reserve float64
		burst   int64
		ok      bool
	}{{0, 0, true}, {0.8, DefaultMeterBurst, true}, {1, DefaultMeterBurst, false}, {-0.1, DefaultMeterBurst, false}, {0.5, 1000, false}} {
		cfg := DefaultConfig()
		cfg.Reserve, cfg.MeterBurst = tc.reserve, tc.burst
		if err := cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("reserve %g burst %d: %v", tc.reserve, tc.burst, err)
		}
	}
}

// TestMeterNamesTheLinksInterface: a meter carries the link's interface from the topology, where
// the switch finds the link's traffic (in the emulation, the switch's port of that name).
func TestMeterNamesTheLinksInterface(t *testing.T) {
	top, err := topo.Parse("sw.yaml", []byte(`name: sw
nodes: [{name: paris, enforcer: true}, madrid]
links:
  - {name: pm, from: paris, to: madrid, capacity: 10Mbps, interface: w4}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Reserve = 0.8
	c, err := New(top, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
	// The meter opens from the floor, 2 Mbit/s, in four steps over 4 s to 10 − 2.64 Mbit/s (3
	// layers, 2.4 Mbit/s, with the margin) for the non-media traffic.
	for _, step := range []struct {
		at   time.Duration
		rate int64
	}{{0, 2_000_000}, {999 * time.Millisecond, 2_000_000}, {time.Second, 3_340_000}, {3 * time.Second, 6_020_000}, {4 * time.Second, 7_360_000}} {
		c.Update(step.at)
		if m, ok := c.Rules().Meter("paris", "pm"); !ok || m.Interface != "w4" || m.RateBps != step.rate {
			t.Fatalf("at %v: meter %+v (%v), want %d bit/s", step.at, m, ok, step.rate)
		}
	}
	// Once the link has no subscription the meter goes, and the next one opens from the floor.
	mustOK(t, c.DeleteSubscription("s"))
	c.Update(5 * time.Second)
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s2", Stream: "cam", Receiver: "madrid"}))
	c.Update(6 * time.Second)
	if m, _ := c.Rules().Meter("paris", "pm"); m.RateBps != 2_000_000 {
		t.Fatalf("a meter again: %+v, want it at the floor", m)
	}
}

// TestReservationHoldsMediaPeaks: a busy scene lifts the stream's measured layers. With the
// reservation the controller allocates and meters at the peak for PeakHold (the peak standing for
// the 10 % margin where it is higher): the second layer no longer fits the 1.6 Mbit/s reserved on
// pm and stays off until the peak has been gone 10 s, and the meter leaves media the peak of what
// it has; then both follow the current rates again.
func TestReservationHoldsMediaPeaks(t *testing.T) {
	c := newTestController(t, func(cfg *Config) { cfg.Reserve = 0.8; cfg.PeakHold = 10 * time.Second })
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
	step := func(at time.Duration, wantLayers int, wantMeter int64) {
		t.Helper()
		mustOK(t, c.SetLinkLoad("pm", mbps(3), at)) // TCP fills the link
		c.Update(at)
		m, _ := c.Rules().Meter("paris", "pm")
		if got := layersAt(t, c, "s"); got != wantLayers || m.RateBps != wantMeter {
			t.Fatalf("at %v: %d layers, meter %d bit/s; want %d, %d", at, got, m.RateBps, wantLayers, wantMeter)
		}
	}
	c.Update(0)
	step(5*time.Second, 2, 680_000) // 2 − 1.2 × 1.1
	mustOK(t, c.SetLayers("cam", []api.Layer{{RateBps: 900_000}, {RateBps: 800_000}, {RateBps: 1_200_000}}))
	step(6*time.Second, 1, 400_000) // 1.7 > 1.6: down to one layer; the floor while the old rate settles
	mustOK(t, c.SetLayers("cam", paperLayers))
	step(8*time.Second, 1, 1_100_000)          // the scene is quiet again, its peak is held: 2 − 0.9
	step(18*time.Second, 1, 1_100_000)         // ended 10 s ago: still held
	step(18500*time.Millisecond, 1, 1_340_000) // 2 − 0.6 × 1.1
	step(21*time.Second, 2, 680_000)           // upgraded after the hold (2 s)
}

// TestPeaksOnlyWithAReservation: without a reservation the same peak changes nothing.
func TestPeaksOnlyWithAReservation(t *testing.T) {
	c := newTestController(t, func(cfg *Config) { cfg.PeakHold = 10 * time.Second })
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
	c.Update(0)
	mustOK(t, c.SetLayers("cam", []api.Layer{{RateBps: 900_000}, {RateBps: 800_000}, {RateBps: 1_200_000}}))
	c.Update(time.Second)
	mustOK(t, c.SetLayers("cam", paperLayers))
	c.Update(2 * time.Second)
	if got := layersAt(t, c, "s"); got != 2 {
		t.Fatalf("%d layers, want 2 (1.2 Mbit/s × 1.1 fits 2 Mbit/s)", got)
	}
}

func TestPeakHoldWindow(t *testing.T) {
	var p peakHold
	peaks := func() []cc.Bitrate { return p.rates(nil) }
	p.observe(0, 10*time.Second, []cc.Bitrate{100, 50})
	p.observe(time.Second, 10*time.Second, []cc.Bitrate{300, 50})
	p.observe(2*time.Second, 10*time.Second, []cc.Bitrate{100, 90})
	if got := peaks(); !slices.Equal(got, []cc.Bitrate{300, 90}) {
		t.Errorf("peaks %v", got)
	}
	p.observe(12*time.Second, 10*time.Second, []cc.Bitrate{100, 90})
	if got := peaks(); !slices.Equal(got, []cc.Bitrate{300, 90}) {
		t.Errorf("the peak ended 10 s ago, at the window's edge: %v", got)
	}
	p.observe(12500*time.Millisecond, 10*time.Second, []cc.Bitrate{100, 90})
	if got, n := peaks(), len(p.samples); !slices.Equal(got, []cc.Bitrate{100, 90}) || n != 1 {
		t.Errorf("after the window: %v over %d samples", got, n)
	}
	p.observe(13*time.Second, 0, []cc.Bitrate{120, 90, 40})
	if got := peaks(); !slices.Equal(got, []cc.Bitrate{120, 90, 40}) {
		t.Errorf("no hold, a layer more: %v", got)
	}
	// A layer fewer within the window: the peaks are those of the new ladder only.
	p.observe(14*time.Second, 10*time.Second, []cc.Bitrate{500, 90, 40})
	p.observe(15*time.Second, 10*time.Second, []cc.Bitrate{100, 80})
	if got := peaks(); !slices.Equal(got, []cc.Bitrate{100, 80}) {
		t.Errorf("a layer fewer: %v", got)
	}
}

// TestStreamLosesALayerUnderPeakHold: the SFU re-measures a stream with a layer fewer while its
// peaks are held (a live run of seed 000 paniced in Update here, with the controller's lock held).
func TestStreamLosesALayerUnderPeakHold(t *testing.T) {
	c := newTestController(t, func(cfg *Config) { cfg.Reserve = 0.8 })
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
	c.Update(0)
	mustOK(t, c.SetLayers("cam", paperLayers[:2]))
	c.Update(time.Second)
	if got := layersAt(t, c, "s"); got != 2 {
		t.Fatalf("%d layers, want 2", got)
	}
	mustOK(t, c.SetLayers("cam", paperLayers))
	c.Update(2 * time.Second)
}
