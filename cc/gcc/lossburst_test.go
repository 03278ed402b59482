package gcc

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// appLimitedRun drives a Sender the way an SFU does: it sends what its media needs (app-limited, a
// 1200-byte packet at a time at media(now)), not the estimate; the path adds a fixed delay and
// drops packets at random with probability loss(now); feedback comes every 50 ms; probe clusters
// the Sender asks for (NextProbe) are sent as padding at the cluster rate, tagged with its ID.
type appLimitedRun struct {
	s      *Sender
	rng    *rand.Rand
	media  func(now time.Duration) cc.Bitrate
	loss   func(now time.Duration) float64
	seq    int64
	next   time.Duration // next media packet
	probe  cc.ProbeCluster
	probeN int // probe packets still to send
	pnext  time.Duration
	queued []cc.PacketResult
	// onFeedback is called after every feedback with the time and the target.
	onFeedback func(now time.Duration, target cc.Bitrate)
}

const appDelay = 20 * time.Millisecond

func (r *appLimitedRun) send(now time.Duration, size, cluster int) {
	r.s.OnPacketSent(cc.SentPacket{SeqNo: r.seq, SendTime: now, Size: size, ProbeCluster: cluster})
	lost := r.rng.Float64() < r.loss(now)
	r.queued = append(r.queued, cc.PacketResult{SeqNo: r.seq, SendTime: now, Size: size, ProbeCluster: cluster, Arrival: now + appDelay, Lost: lost})
	r.seq++
}

// run advances from `from` to `to` in 1 ms steps.
func (r *appLimitedRun) run(from, to time.Duration) {
	for now := from; now < to; now += time.Millisecond {
		if r.probeN == 0 {
			if c, ok := r.s.NextProbe(now); ok {
				r.probe, r.pnext = c, now
				r.probeN = max(c.MinPackets, (c.MinBytes+1199)/1200)
			}
		}
		for r.probeN > 0 && r.pnext <= now {
			r.send(now, 1200, r.probe.ID)
			r.probeN--
			r.pnext += r.probe.Rate.TimeFor(1200)
		}
		for r.next <= now {
			r.send(now, 1200, 0)
			r.next += r.media(now).TimeFor(1200)
		}
		if now%(25*time.Millisecond) == 0 {
			r.s.OnTick(now)
		}
		if now%(50*time.Millisecond) == 0 && now > 0 {
			var batch []cc.PacketResult
			keep := r.queued[:0]
			for _, p := range r.queued {
				if p.Arrival <= now {
					batch = append(batch, p)
				} else {
					keep = append(keep, p)
				}
			}
			r.queued = keep
			r.s.OnRTT(now, 2*appDelay)
			r.s.OnFeedback(cc.Feedback{Now: now + appDelay, Packets: batch})
			if r.onFeedback != nil {
				r.onFeedback(now, r.s.TargetRate())
			}
		}
	}
}

func constRate(r cc.Bitrate) func(time.Duration) cc.Bitrate {
	return func(time.Duration) cc.Bitrate { return r }
}

// lossBetween is loss p during [from, to).
func lossBetween(from, to time.Duration, p float64) func(time.Duration) float64 {
	return func(now time.Duration) float64 {
		if now >= from && now < to {
			return p
		}
		return 0
	}
}

// TestLossBurstCutsTheEstimateOncePerLossInterval replays what the fan-out benchmark showed: an
// SFU sending 800 kbit/s meets a one-second burst of 20 % random loss (no queueing). The loss-based
// controller must form its loss fraction at most once per second, as goog_cc does with transport
// feedback, and cut at most once per fraction and per 300 ms + RTT: a fraction per feedback message
// (every 50 ms here) let the same burst cut the estimate three or four times, and a two-second burst
// took it to the floor.
func TestLossBurstCutsTheEstimateOncePerLossInterval(t *testing.T) {
	for _, burst := range []time.Duration{time.Second, 2 * time.Second} {
		s := NewSender(WithInitialRate(900*cc.Kbps), WithMinRate(30*cc.Kbps), WithProbing(false))
		start := 6 * time.Second
		r := &appLimitedRun{s: s, rng: rand.New(rand.NewPCG(3, 4)), media: constRate(800 * cc.Kbps), loss: lossBetween(start, start+burst, 0.2)}
		var cuts []time.Duration
		var before, lowest cc.Bitrate
		prev := cc.Bitrate(0)
		r.onFeedback = func(now time.Duration, target cc.Bitrate) {
			if now < start {
				before = target
			} else if now < start+burst+2*time.Second {
				if target < prev*99/100 {
					cuts = append(cuts, now)
				}
				if lowest == 0 || target < lowest {
					lowest = target
				}
			}
			prev = target
		}
		r.run(0, start+burst+2*time.Second)
		t.Logf("%v burst of 20 %% loss: estimate %v before, lowest %v, %d cuts at %v", burst, before, lowest, len(cuts), cuts)
		if want := int(burst/time.Second) + 1; len(cuts) > want {
			t.Errorf("%v burst: %d cuts %v, want at most %d (one per loss interval)", burst, len(cuts), cuts, want)
		}
		for i := 1; i < len(cuts); i++ {
			if gap := cuts[i] - cuts[i-1]; gap < lossUpdateInterval-50*time.Millisecond {
				t.Errorf("cuts %v apart (%v), want at most one per loss interval", gap, cuts)
			}
		}
		// 20 % loss cuts by 10 % per fraction: even the two-second burst must leave most of it.
		if lowest < before*65/100 {
			t.Errorf("%v burst: estimate fell from %v to %v", burst, before, lowest)
		}
	}
}

// TestProbeRestoresTheEstimateAfterALossBurst: after a burst of loss the loss-based estimate only
// grows by 8 % per second, so an application-limited sender (an SFU that moved its subscriber down a
// layer) would need many seconds to learn that the path is clean again. A probe cluster sent at the
// rate it wants (RequestProbe, then NextProbe, tagged padding) restores the estimate at once, as in
// libwebrtc, where a probe result resets the loss-based estimate too.
func TestProbeRestoresTheEstimateAfterALossBurst(t *testing.T) {
	s := NewSender(WithInitialRate(900*cc.Kbps), WithMinRate(30*cc.Kbps), WithInitialProbes(0, 0), WithALRProbing(false, 0, 0))
	start, end := 4*time.Second, 6*time.Second
	media := func(now time.Duration) cc.Bitrate {
		if now >= start {
			return 250 * cc.Kbps // moved down a layer for the burst
		}
		return 800 * cc.Kbps
	}
	r := &appLimitedRun{s: s, rng: rand.New(rand.NewPCG(5, 6)), media: media, loss: lossBetween(start, end, 0.3)}
	r.run(0, end+time.Second)
	low := s.TargetRate()
	if low > 1100*cc.Kbps {
		t.Fatalf("a 2 s burst of 30 %% loss left the estimate at %v: nothing to restore", low)
	}
	// Without a probe, a second later it has barely moved.
	r.run(end+time.Second, end+2*time.Second)
	if got := s.TargetRate(); got > low*12/10 {
		t.Fatalf("estimate %v a second later without probing, from %v: want the slow 8 %%/s recovery", got, low)
	}
	s.RequestProbe(end+2*time.Second, 1500*cc.Kbps)
	r.run(end+2*time.Second, end+2500*time.Millisecond)
	got := s.TargetRate()
	t.Logf("after the burst %v; 500 ms after a 1.5 Mbit/s probe %v", low, got)
	if got < 1350*cc.Kbps || got > 1500*cc.Kbps {
		t.Errorf("estimate %v after a clean 1.5 Mbit/s probe, want about the probed rate (≤ 1.5 Mbit/s)", got)
	}
}
