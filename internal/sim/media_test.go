package sim

import (
	"math"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

func TestMediaSendsAtTargetAndGetsFeedback(t *testing.T) {
	s, fwd, rev := duplex(t, 1, 20*time.Second, LinkConfig{Rate: ConstantRate(2e6), Delay: 40 * time.Millisecond,
		Loss: LossConfig{Model: "random", P: 0.05}})
	c := &constRate{target: 800_000}
	f, err := NewMediaFlow(s, MediaConfig{Name: "m", Forward: fwd, Reverse: rev, Stop: 20 * time.Second,
		Codec: DefaultCodecConfig(), Controller: c})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Run()
	st := f.Stats()
	sent := float64(st.SentBytes) * 8 / 20
	if math.Abs(sent-800e3) > 0.01*800e3 {
		t.Fatalf("send rate %v, want 800 kbit/s on the wire", sent)
	}
	// Feedback every 100 ms.
	if c.feedbacks < 190 || c.feedbacks > 200 {
		t.Fatalf("%d feedback packets", c.feedbacks)
	}
	// The controller hears about (almost) every packet, ~5% as lost.
	if float64(c.reported) < 0.98*float64(c.sent) {
		t.Fatalf("reported %d of %d", c.reported, c.sent)
	}
	if lr := float64(c.lost) / float64(c.reported); math.Abs(lr-0.05) > 0.01 {
		t.Fatalf("reported loss %v", lr)
	}
	if c.lastRTT < 80*time.Millisecond || c.lastRTT > 90*time.Millisecond {
		t.Fatalf("rtt %v", c.lastRTT)
	}
}

func TestLayeredSourceSendsLayersThatFit(t *testing.T) {
	s, fwd, rev := duplex(t, 1, 10*time.Second, LinkConfig{Rate: ConstantRate(10e6), Delay: 10 * time.Millisecond})
	cfg := DefaultCodecConfig()
	cfg.Layers = []float64{150e3, 500e3, 1.5e6}
	c := &constRate{target: 700_000}
	f, _ := NewMediaFlow(s, MediaConfig{Name: "m", Forward: fwd, Reverse: rev, Stop: 10 * time.Second, Codec: cfg, Controller: c})
	_ = s.Run()
	// Two layers fit in 700 kbit/s: 650 kbit/s on the wire.
	rate := float64(f.Stats().SentBytes) * 8 / 10
	if math.Abs(rate-650e3) > 0.01*650e3 {
		t.Fatalf("rate %v, want 650 kbit/s", rate)
	}
}

func TestMediaPause(t *testing.T) {
	s, fwd, rev := duplex(t, 1, 10*time.Second, LinkConfig{Rate: ConstantRate(10e6), Delay: 10 * time.Millisecond})
	c := &constRate{target: 1_000_000}
	f, _ := NewMediaFlow(s, MediaConfig{Name: "m", Forward: fwd, Reverse: rev, Stop: 10 * time.Second,
		Codec: DefaultCodecConfig(), Controller: c, Pauses: []Interval{{2 * time.Second, 7 * time.Second}}})
	_ = s.Run()
	rate := float64(f.Stats().SentBytes) * 8 / 10
	if math.Abs(rate-500e3) > 0.01*500e3 {
		t.Fatalf("rate %v, want half of 1 Mbit/s", rate)
	}
	for b := 21; b < 70; b++ {
		if f.Stats().BinSent[b] != 0 {
			t.Fatalf("sent during the pause (bin %d)", b)
		}
	}
}

// probingRate is constRate with one probe cluster at the start, recording its packets' sizes.
type probingRate struct {
	constRate
	handed     bool
	probeSizes []int
}

func (p *probingRate) NextProbe(time.Duration) (cc.ProbeCluster, bool) {
	if p.handed {
		return cc.ProbeCluster{}, false
	}
	p.handed = true
	return cc.ProbeCluster{ID: 1, Rate: 1200 * cc.Kbps, MinPackets: 5, MinBytes: 3000}, true
}

func (p *probingRate) OnPacketSent(sp cc.SentPacket) {
	p.constRate.OnPacketSent(sp)
	if sp.ProbeCluster == 1 {
		p.probeSizes = append(p.probeSizes, sp.Size)
	}
}

// TestProbesArePaddingPackets: a probe cluster is sent as padding-only packets of ProbePadding
// bytes plus the headers, as strata's real senders send it, as many as its byte minimum needs
// (3000 bytes: 11 packets of 295), not as media-sized packets.
func TestProbesArePaddingPackets(t *testing.T) {
	s, fwd, rev := duplex(t, 1, 2*time.Second, LinkConfig{Rate: ConstantRate(10e6), Delay: 10 * time.Millisecond})
	c := &probingRate{constRate: constRate{target: 300_000}}
	if _, err := NewMediaFlow(s, MediaConfig{Name: "m", Forward: fwd, Reverse: rev, Stop: 2 * time.Second,
		Codec: DefaultCodecConfig(), Controller: c}); err != nil {
		t.Fatal(err)
	}
	_ = s.Run()
	if len(c.probeSizes) != 11 {
		t.Fatalf("%d probe packets, want 11 (3000 bytes in packets of %d)", len(c.probeSizes), ProbePadding+40)
	}
	for _, size := range c.probeSizes {
		if size != ProbePadding+40 {
			t.Fatalf("probe packet of %d bytes, want %d", size, ProbePadding+40)
		}
	}
}
