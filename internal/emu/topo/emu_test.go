package topo

import (
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// probe sends probes of wire bytes from ha to hb's port 9000 at bps for dur
// (or count of them) with the given TOS, starting now, and returns what hb
// received.
func probe(t *testing.T, n *Network, wire int, bps float64, count int, dur time.Duration, tos int) []probeRec {
	t.Helper()
	ha, hb := n.hosts["ha"], n.hosts["hb"]
	rx, err := listenProbes(hb, 9000)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := newProbeSender(ha, hb, 9000, wire-probeHeader, tos)
	if err != nil {
		rx.stop()
		t.Fatal(err)
	}
	defer tx.close()
	var stop atomic.Bool
	if dur > 0 {
		time.AfterFunc(dur, func() { stop.Store(true) })
	}
	tx.paced(bps, count, &stop)
	time.Sleep(200 * time.Millisecond)
	return rx.stop()
}

// spacingRate is the rate at which recs[i:j] arrived, from their spacing.
func spacingRate(recs []probeRec) float64 {
	bytes := 0
	for _, r := range recs[1:] {
		bytes += r.wire
	}
	return float64(bytes) * 8 / time.Duration(recs[len(recs)-1].recv-recs[0].recv).Seconds()
}

func TestECNMarking(t *testing.T) {
	n := twoNodes(t, sim.LinkConfig{Rate: sim.ConstantRate(10e6), Delay: 5 * time.Millisecond,
		Queue: sim.Limit{Unit: sim.LimitPackets, Value: 100}, ECN: sim.Limit{Unit: sim.LimitPackets, Value: 5}}, 5*time.Second)
	n.Start(time.Now())
	recs := probe(t, n, 1000, 15e6, 0, time.Second, 0x02) // ECT(0), 1.5 times the link
	st, ls := n.FlowStats("f"), n.LinkStats()[0]
	ce := 0
	for _, r := range recs {
		if r.tos&3 == 3 {
			ce++
		} else if r.tos&3 != 2 {
			t.Fatalf("probe %d arrived with TOS %#x", r.seq, r.tos)
		}
	}
	t.Logf("%d probes arrived, %d with CE; the link marked %d, dropped %d", len(recs), ce, ls.Marks, ls.Drops)
	// The kernel drops IPv4 packets with a bad header checksum, so every
	// marked packet arriving shows the checksum was fixed.
	if ce == 0 || int64(ce) != ls.Marks || int64(ce) != st.Marked || int64(len(recs)) != st.RecvPackets {
		t.Fatalf("%d CE received, link marked %d, flow counted %d marked; %d received of %d delivered",
			ce, ls.Marks, st.Marked, len(recs), st.RecvPackets)
	}
	if recs[0].tos&3 == 3 {
		t.Fatal("the first probe, on an empty queue, was marked")
	}
	plain := probe(t, n, 1000, 15e6, 0, 500*time.Millisecond, 0) // not ECN-capable: never marked
	for _, r := range plain {
		if r.tos != 0 {
			t.Fatalf("a non-ECT probe arrived with TOS %#x", r.tos)
		}
	}
	if n.LinkStats()[0].Marks != ls.Marks {
		t.Fatal("the link counted marks on non-ECT packets")
	}
}

func TestGilbertElliottLoss(t *testing.T) {
	loss := sim.LossConfig{Model: "gilbert-elliott", P: 0.05, R: 0.3, LossGood: 0, LossBad: 0.9}
	n := twoNodes(t, sim.LinkConfig{Rate: sim.ConstantRate(100e6), Delay: 2 * time.Millisecond, Loss: loss}, 5*time.Second)
	n.Start(time.Now())
	const count = 1500
	recs := probe(t, n, 200, 200*8*1500, count, 0, 0)
	// The link draws from the simulator's model under the simulator's name
	// for it, so the simulator says exactly which packets are lost.
	model := sim.NewLossModel(loss, sim.NewRNG(n.spec.Seed, "link/ab/loss"))
	got := make([]bool, count)
	for _, r := range recs {
		got[r.seq] = true
	}
	lost, bursts := 0, 0
	for i := range count {
		want := !model.Lose()
		if got[i] != want {
			t.Fatalf("probe %d: arrived %v, the simulator's model says %v", i, got[i], want)
		}
		if !want {
			lost++
			if i == 0 || got[i-1] {
				bursts++
			}
		}
	}
	mean := loss.MeanLoss()
	sd := math.Sqrt(count * mean * (1 - mean))
	t.Logf("%d of %d lost (%.1f %%, model mean %.1f %%) in %d bursts of %.2f on average", lost, count,
		100*float64(lost)/count, 100*mean, bursts, float64(lost)/float64(max(bursts, 1)))
	if lost == 0 || float64(lost)/float64(bursts) < 1.5 {
		t.Fatal("Gilbert–Elliott losses should come in bursts")
	}
	// Bursty loss spreads wider than independent loss: a loose band.
	if math.Abs(float64(lost)-count*mean) > 3*z99*sd {
		t.Fatalf("%d lost, expected about %.0f", lost, count*mean)
	}
}

func TestRateScheduleAndOutage(t *testing.T) {
	const delay = 10 * time.Millisecond
	sched := sim.RateSchedule{{At: 0, Bps: 8e6}, {At: time.Second, Bps: 0}, {At: 1500 * time.Millisecond, Bps: 2e6}}
	n := twoNodes(t, sim.LinkConfig{Rate: sched, Delay: delay, Queue: sim.Limit{Unit: sim.LimitTime, Value: 0.1}}, 3*time.Second)
	t0 := time.Now()
	n.Start(t0)
	recs := probe(t, n, 1000, 10e6, 0, 2500*time.Millisecond, 0)
	at := func(r probeRec) time.Duration { return time.Duration(r.recv - t0.UnixNano()) }
	window := func(from, to time.Duration) []probeRec {
		return slices.DeleteFunc(slices.Clone(recs), func(r probeRec) bool { return at(r) < from+delay || at(r) >= to+delay })
	}
	for _, w := range []struct {
		from, to time.Duration
		bps      float64
	}{{300 * time.Millisecond, time.Second, 8e6}, {1700 * time.Millisecond, 2500 * time.Millisecond, 2e6}} {
		got := spacingRate(window(w.from, w.to))
		t.Logf("%v–%v: %.4g bit/s, configured %.4g", w.from, w.to, got, w.bps)
		if math.Abs(got/w.bps-1) > 0.02 {
			t.Fatalf("%v–%v: %.4g bit/s, configured %.4g", w.from, w.to, got, w.bps)
		}
	}
	// A packet in transmission when the outage begins finishes after it.
	if out := window(time.Second+2*time.Millisecond, 1500*time.Millisecond); len(out) > 0 {
		t.Fatalf("%d probes arrived during the outage, the first at %v", len(out), at(out[0]))
	}
	ls := n.LinkStats()[0]
	drops := 0
	for _, d := range ls.DropsPerBin[11:15] {
		drops += int(d)
	}
	if drops == 0 {
		t.Fatal("a time-limited queue at rate zero should drop what arrives during the outage")
	}
}

// TestLinkLayerOverhead: the overhead counts in serialisation, so 800-byte
// packets with 200 bytes of framing each cross an 8 Mbit/s link at
// 6.4 Mbit/s of IP.
func TestLinkLayerOverhead(t *testing.T) {
	n := twoNodes(t, sim.LinkConfig{Rate: sim.ConstantRate(8e6), Delay: 5 * time.Millisecond, Overhead: 200,
		Queue: sim.Limit{Unit: sim.LimitPackets, Value: 50}}, 3*time.Second)
	n.Start(time.Now())
	recs := probe(t, n, 800, 8e6, 0, 1200*time.Millisecond, 0)
	got := spacingRate(recs[len(recs)/4:])
	t.Logf("%.4g bit/s of IP", got)
	if math.Abs(got/6.4e6-1) > 0.02 {
		t.Fatalf("%.4g bit/s of IP through 8 Mbit/s with 200 of every 1000 bytes framing; want 6.4e6", got)
	}
}

// TestJitter: with 20 ms of jitter every probe takes between the delay and
// the delay plus the jitter (plus serialisation and the machine's own
// microseconds), the spread is used, and probes arrive in order.
func TestJitter(t *testing.T) {
	const delay, jitter = 10 * time.Millisecond, 20 * time.Millisecond
	n := twoNodes(t, sim.LinkConfig{Rate: sim.ConstantRate(100e6), Delay: delay, Jitter: jitter}, 3*time.Second)
	n.Start(time.Now())
	recs := probe(t, n, 200, 200*8*200, 200, 0, 0) // 200 a second
	lo, hi := time.Hour, time.Duration(0)
	for i, r := range recs {
		lo, hi = min(lo, r.owd()), max(hi, r.owd())
		if i > 0 && r.seq < recs[i-1].seq {
			t.Fatalf("probe %d arrived after %d", recs[i-1].seq, r.seq)
		}
	}
	t.Logf("%d probes, one-way delay %v … %v", len(recs), lo, hi)
	if len(recs) != 200 || lo < delay || hi > delay+jitter+2*time.Millisecond || hi-lo < jitter/2 {
		t.Fatalf("%d probes, one-way delay %v … %v; configured %v + [0, %v)", len(recs), lo, hi, delay, jitter)
	}
}
