package gcc

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

func TestInitialProbesAtThreeAndSixTimesStart(t *testing.T) {
	s := NewSender(WithInitialRate(300 * cc.Kbps))
	s.OnTick(0)
	var rates []cc.Bitrate
	for {
		c, ok := s.NextProbe(0)
		if !ok {
			break
		}
		rates = append(rates, c.Rate)
		if c.MinPackets != 5 || c.MinBytes != c.Rate.BytesIn(15*time.Millisecond) || c.ID == 0 {
			t.Errorf("cluster %+v: want 5 packets, 15 ms worth of bytes and a non-zero ID", c)
		}
	}
	if len(rates) != 2 || rates[0] != 900*cc.Kbps || rates[1] != 1800*cc.Kbps {
		t.Errorf("initial probes %v, want [900 kbit/s 1.8 Mbit/s]", rates)
	}
	if _, ok := NewSender(WithProbing(false)).NextProbe(0); ok {
		t.Error("WithProbing(false) still probes")
	}
}

func TestProbeResultEstimator(t *testing.T) {
	// A cluster sent at 2 Mbit/s through a 1 Mbit/s bottleneck arrives at 1 Mbit/s: the link is
	// saturated, so the estimate is 0.95 × the receive rate. One sent at 600 kbit/s arrives
	// intact: the estimate is the rate itself.
	for _, tc := range []struct {
		probe, link cc.Bitrate
		want        func(recv float64) float64
	}{
		{2 * cc.Mbps, cc.Mbps, func(recv float64) float64 { return 0.95 * recv }},
		{600 * cc.Kbps, cc.Mbps, func(float64) float64 { return 600e3 }},
	} {
		var e probeEstimator
		c := cc.ProbeCluster{ID: 7, Rate: tc.probe, MinPackets: 5, MinBytes: tc.probe.BytesIn(15 * time.Millisecond)}
		link := cctest.Link{Rate: tc.link, Delay: 20 * time.Millisecond}
		spacing := tc.probe.TimeFor(1200)
		var first, last time.Duration
		for i := 0; i < 10; i++ {
			send := time.Duration(i) * spacing
			arrival, _ := link.Send(send, 1200)
			if i == 0 {
				first = arrival
			}
			last = arrival
			e.add(c, &cc.PacketResult{SeqNo: int64(i), SendTime: send, Arrival: arrival, Size: 1200, ProbeCluster: 7})
		}
		got, ok := e.take()
		if !ok {
			t.Fatalf("probe %v: no result", tc.probe)
		}
		recv := float64(9*1200*8) / (last - first).Seconds()
		if want := tc.want(recv); got < want*0.999 || got > want*1.001 {
			t.Errorf("probe %v over %v: estimate %.0f, want %.0f", tc.probe, tc.link, got, want)
		}
	}
}

func TestProbingSpeedsUpRampUp(t *testing.T) {
	// With probing the send-side estimate reaches most of a 2 Mbit/s link within two seconds;
	// without, the 8 %/s multiplicative increase needs far longer from 300 kbit/s.
	link := bottleneck(2 * cc.Mbps)
	with := cctest.RunRate(NewSender(), cctest.RateConfig{Link: link, Duration: 3 * time.Second})
	without := cctest.RunRate(NewSender(WithProbing(false)), cctest.RateConfig{Link: link, Duration: 3 * time.Second})
	at := func(tr cctest.Trace) cc.Bitrate { return tr.MeanTarget(1900*time.Millisecond, 2*time.Second) }
	if got := at(with); got < 1200*cc.Kbps {
		t.Errorf("with probing, target at 2 s = %v, want ≥ 1.2 Mbit/s\n%s", got, with.String())
	}
	if got := at(without); got > 600*cc.Kbps {
		t.Errorf("without probing, target at 2 s = %v, want the slow multiplicative ramp (≤ 600 kbit/s)", got)
	}
}

func TestApplicationLimitedEstimateStaysBounded(t *testing.T) {
	// An application sending 300 kbit/s on a 2 Mbit/s link is application-limited. The estimate
	// must not run away above the link's capacity (pion's gcc grows it without bound); periodic
	// ALR probes keep it informed.
	link := bottleneck(2 * cc.Mbps)
	s := NewSender()
	tr := cctest.RunRate(s, cctest.RateConfig{Link: link, Duration: 60 * time.Second, AppLimit: 300 * cc.Kbps})
	alr := 0
	for _, smp := range tr.Samples {
		if smp.Target > link.Rate*5/4 {
			t.Fatalf("t=%v: target %v above 1.25 × capacity\n%s", smp.At, smp.Target, tr.String())
		}
		if smp.State.ALR {
			alr++
		}
	}
	if alr < len(tr.Samples)/2 {
		t.Errorf("ALR detected in %d of %d samples, want most of an application-limited run", alr, len(tr.Samples))
	}
	if s.probes.nextID <= 3 {
		t.Errorf("only the initial probes were sent (next ID %d): no ALR probes in 60 s", s.probes.nextID)
	}
}

func TestRequestProbe(t *testing.T) {
	s := NewSender(WithProbing(true), WithInitialProbes(0, 0))
	s.OnTick(0)
	if _, ok := s.NextProbe(0); ok {
		t.Fatal("initial probes disabled by zero scales, yet a probe is pending")
	}
	s.RequestProbe(time.Second, 100*cc.Kbps) // below the estimate: nothing to learn
	if _, ok := s.NextProbe(time.Second); ok {
		t.Error("a probe below the estimate was issued")
	}
	s.RequestProbe(time.Second, 2*cc.Mbps)
	if c, ok := s.NextProbe(time.Second); !ok || c.Rate != 2*cc.Mbps {
		t.Errorf("requested probe: %+v, %v; want one at 2 Mbit/s", c, ok)
	}
}

func TestRecoveryProbeAfterLargeDropInALR(t *testing.T) {
	cfg := newConfig([]Option{WithInitialProbes(0, 0)})
	p := newProbeController(&cfg)
	alr := newALRDetector(&cfg)
	p.start(0)
	p.setEstimate(time.Second, 2e6)
	p.setEstimate(2*time.Second, 1e6) // below 0.66 × 2 Mbit/s: a large drop
	p.recover(3*time.Second, &alr)
	if _, ok := p.next(); ok {
		t.Fatal("recovery probe while not application-limited")
	}
	alr.inALR = true
	p.recover(3*time.Second, &alr)
	c, ok := p.next()
	if !ok || c.Rate != cc.BitrateFromFloat(0.85*2e6) {
		t.Fatalf("recovery probe %+v (%v), want one at 0.85 × 2 Mbit/s", c, ok)
	}
	p.setEstimate(4*time.Second, 1.2e6)
	p.recover(9*time.Second, &alr) // more than 5 s after the drop, and already probed
	if _, ok := p.next(); ok {
		t.Error("a second recovery probe for the same drop")
	}
}

// TestNoFurtherProbesAtTheMaximum: once a probe is capped at the maximum rate, estimates at the
// cap must not keep re-arming probe clusters (a capped flow would otherwise pad without end).
func TestNoFurtherProbesAtTheMaximum(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxRate = 2500 * cc.Kbps
	p := newProbeController(&cfg)
	p.start(0)
	for {
		if _, ok := p.next(); !ok {
			break
		}
	}
	issued := 0
	for i := 1; i <= 100; i++ {
		now := time.Duration(i) * 100 * time.Millisecond
		p.setEstimate(now, cfg.MaxRate.Bps())
		for {
			if _, ok := p.next(); !ok {
				break
			}
			issued++
		}
	}
	if issued > 1 {
		t.Fatalf("%d probe clusters issued while the estimate sat at the maximum, want at most 1", issued)
	}
}

// TestProbeResultNeverExceedsTheClusterRate: a cluster padded out in bursts on a 10 ms clock (as
// strata's allocator does) looks faster than it was meant to be, since its first-to-last interval
// is shorter than the time its bytes stand for; the result is capped at the cluster's rate.
func TestProbeResultNeverExceedsTheClusterRate(t *testing.T) {
	var e probeEstimator
	c := cc.ProbeCluster{ID: 3, Rate: 600 * cc.Kbps, MinPackets: 5, MinBytes: (600 * cc.Kbps).BytesIn(30 * time.Millisecond)}
	seq := int64(0)
	for burst := 0; burst < 3; burst++ { // 30 ms worth of bytes in three bursts 10 ms apart
		send := time.Duration(burst) * 10 * time.Millisecond
		for i := 0; i < 3; i++ {
			at := send + time.Duration(i)*50*time.Microsecond
			e.add(c, &cc.PacketResult{SeqNo: seq, SendTime: at, Arrival: at + 20*time.Millisecond, Size: 750, ProbeCluster: 3})
			seq++
		}
	}
	got, ok := e.take()
	if !ok {
		t.Fatal("no result")
	}
	if got > 600e3 {
		t.Errorf("result %.0f bit/s above the cluster's 600 kbit/s", got)
	}
}

// TestLossyClusterGivesNoResult: a cluster whose padding the receiver did not record (reported
// lost) would otherwise read as the few media packets sent meanwhile and pull the estimate down.
func TestLossyClusterGivesNoResult(t *testing.T) {
	var e probeEstimator
	c := cc.ProbeCluster{ID: 4, Rate: 900 * cc.Kbps, MinPackets: 5, MinBytes: 3000}
	for i := 0; i < 12; i++ {
		send := time.Duration(i) * 2 * time.Millisecond
		if i%3 != 0 { // two thirds of the cluster reported lost
			e.addLost(c)
			continue
		}
		e.add(c, &cc.PacketResult{SeqNo: int64(i), SendTime: send, Arrival: send + 20*time.Millisecond, Size: 1200, ProbeCluster: 4})
	}
	if r, ok := e.take(); ok {
		t.Fatalf("result %.0f bit/s from a cluster that lost two thirds of its packets", r)
	}
}
