package netctl

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

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
	c.Update(0)
	// 3 layers (2.4 Mbit/s): non-media traffic metered to 10 − 2.64 Mbit/s.
	if m, ok := c.Rules().Meter("paris", "pm"); !ok || m.Interface != "w4" || m.RateBps != 7_360_000 {
		t.Fatalf("meter %+v (%v)", m, ok)
	}
}
