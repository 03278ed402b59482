package sim

import (
	"math"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/api"
)

// TestSwitchPolicesNonMediaToTheMeter: a 4 Mbit/s constant flow into a 10 Mbit/s link whose switch
// has a 1 Mbit/s meter gets about 1 Mbit/s (plus the 500 kbit bucket) into the link; the link
// counts only what passed, and the rest is lost to the flow. Without a meter everything passes.
func TestSwitchPolicesNonMediaToTheMeter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		meter bool
	}{{"metered", true}, {"no meter", false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Seed: 1, Duration: 10 * time.Second})
			l, err := s.AddLink(LinkConfig{Name: "pm", From: "paris", To: "madrid", Rate: ConstantRate(10e6), Queue: Limit{Unit: LimitPackets, Value: 100}})
			if err != nil {
				t.Fatal(err)
			}
			rules := netctl.NewRuleTable()
			if tc.meter {
				rules.ApplyMeters("paris", []api.Meter{{Link: "pm", RateBps: 1_000_000, BurstBits: 500_000}})
			}
			sw := NewSwitch("paris", rules)
			pol, err := sw.Police(l)
			if err != nil {
				t.Fatal(err)
			}
			f, err := NewCBRFlow(s, CBRConfig{Name: "bg", Forward: []*Link{l}, Stop: 10 * time.Second, Rate: 4e6})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
			st := f.Stats()
			passed := float64(st.RecvBytes*8) / 10
			if !tc.meter {
				if pol.Dropped != 0 || st.RecvPackets < st.SentPackets-2 {
					t.Fatalf("no meter: policer dropped %d, %d of %d delivered", pol.Dropped, st.RecvPackets, st.SentPackets)
				}
				return
			}
			want := (1e6*10 + 500e3) / 10
			if math.Abs(passed-want) > 0.03*want {
				t.Errorf("passed %.0f bit/s, want about %.0f", passed, want)
			}
			if got := l.Stats.TxPackets; got != st.RecvPackets || pol.Dropped+got < st.SentPackets-2 {
				t.Errorf("link sent %d, flow received %d, policer dropped %d of %d", got, st.RecvPackets, pol.Dropped, st.SentPackets)
			}
			if l.Stats.Drops != 0 {
				t.Errorf("the policed traffic fits the link: %d queue drops", l.Stats.Drops)
			}
		})
	}
}

// TestSwitchLetsManagedMediaPass: managed packets never take tokens, and a switch polices only
// links leaving its node.
func TestSwitchLetsManagedMediaPass(t *testing.T) {
	s := New(Config{Seed: 1, Duration: time.Second})
	l, _ := s.AddLink(LinkConfig{Name: "pm", From: "paris", To: "madrid", Rate: ConstantRate(10e6)})
	back, _ := s.AddLink(LinkConfig{Name: "mp", From: "madrid", To: "paris", Rate: ConstantRate(10e6)})
	rules := netctl.NewRuleTable()
	rules.ApplyMeters("paris", []api.Meter{{Link: "pm", RateBps: 1, BurstBits: 12_000}})
	sw := NewSwitch("paris", rules)
	if _, err := sw.Police(back); err == nil {
		t.Fatal("policing a link that does not leave the switch's node: no error")
	}
	pol, err := sw.Police(l)
	if err != nil {
		t.Fatal(err)
	}
	media := &Packet{Size: 1200, Managed: true}
	for i := range 1000 {
		if !pol.Pass(media, time.Duration(i)*time.Microsecond) {
			t.Fatalf("managed packet %d dropped", i)
		}
	}
	other := &Packet{Size: 1200}
	if !pol.Pass(other, time.Millisecond) || pol.Pass(other, time.Millisecond) {
		t.Fatal("a full 12 kbit bucket should pass one 1200-byte packet and then none")
	}
	if allocs := testing.AllocsPerRun(100, func() { pol.Pass(other, 2*time.Millisecond) }); allocs != 0 {
		t.Errorf("Pass allocates %.0f times", allocs)
	}
}
