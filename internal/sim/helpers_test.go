package sim

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// fixedWindow is a window controller with a constant window and the
// standard three-duplicate-ACK retransmit rule: enough to test the
// transport's mechanics against closed-form expectations.
type fixedWindow struct {
	cwnd, dups, retransmits, timeouts, losses int
}

func (w *fixedWindow) OnAck(a cc.Ack) bool {
	if a.Acked > 0 {
		w.dups = 0
		return false
	}
	w.dups++
	if w.dups == 3 {
		w.retransmits++
		return true
	}
	return false
}
func (w *fixedWindow) OnLoss(time.Duration, int)    { w.losses++ }
func (w *fixedWindow) OnTimeout(time.Duration, int) { w.timeouts++ }
func (w *fixedWindow) Cwnd() int                    { return w.cwnd }
func (w *fixedWindow) RTO() time.Duration           { return time.Second }
func (w *fixedWindow) PacingRate() cc.Bitrate       { return 0 }
func (w *fixedWindow) State() cc.State              { return cc.State{Algorithm: "fixed"} }

// constRate is a rate controller with a constant target that records what
// feedback tells it.
type constRate struct {
	target         cc.Bitrate
	sent           int
	reported, lost int
	feedbacks      int
	lastRTT        time.Duration
}

func (c *constRate) OnPacketSent(cc.SentPacket) { c.sent++ }
func (c *constRate) OnFeedback(fb cc.Feedback) {
	c.feedbacks++
	for _, p := range fb.Packets {
		c.reported++
		if p.Lost {
			c.lost++
		}
	}
}
func (c *constRate) OnRTT(_, rtt time.Duration) { c.lastRTT = rtt }
func (c *constRate) OnTick(time.Duration)       {}
func (c *constRate) TargetRate() cc.Bitrate     { return c.target }
func (c *constRate) PacingRate() cc.Bitrate     { return c.target * 5 / 2 }
func (c *constRate) State() cc.State            { return cc.State{Algorithm: "const"} }

// duplex builds a two-node network a<->b with the given forward link config
// and an uncongested 100 Mbit/s reverse link with the same delay.
func duplex(t testing.TB, seed uint64, dur time.Duration, fwd LinkConfig) (*Sim, []*Link, []*Link) {
	t.Helper()
	s := New(Config{Seed: seed, Duration: dur})
	fwd.Name, fwd.From, fwd.To = "ab", "a", "b"
	f, err := s.AddLink(fwd)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.AddLink(LinkConfig{Name: "ba", From: "b", To: "a", Rate: ConstantRate(100e6), Delay: fwd.Delay})
	if err != nil {
		t.Fatal(err)
	}
	return s, []*Link{f}, []*Link{r}
}
