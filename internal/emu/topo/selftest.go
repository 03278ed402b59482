package topo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/emu/netem"
	"github.com/strata-rtc/strata/internal/sim"
)

// The self-test's network: a → r → b carries probes over two queueing links
// (12 then 10 Mbit/s) so queueing is summed over two hops; b → r → a carries
// loss probes over a link losing 5 % at random.
const (
	stDelayAR, stDelayRB = 10 * time.Millisecond, 20 * time.Millisecond
	stRateAR, stRateRB   = 12e6, 10e6
	stLoss               = 0.05
	stWire               = 1200 // probe size on the wire (network layer)
	stLossProbes         = 3000
	z99                  = 2.576 // two-sided 99 % normal quantile
)

func selfTestSpec() Spec {
	rate := sim.ConstantRate
	return Spec{
		Links: []sim.LinkConfig{
			{Name: "a-r", From: "a", To: "r", Rate: rate(stRateAR), Delay: stDelayAR, Queue: sim.Limit{Unit: sim.LimitPackets, Value: 30}},
			{Name: "r-b", From: "r", To: "b", Rate: rate(stRateRB), Delay: stDelayRB, Queue: sim.Limit{Unit: sim.LimitPackets, Value: 60}},
			{Name: "b-r", From: "b", To: "r", Rate: rate(100e6), Delay: stDelayRB},
			{Name: "r-a", From: "r", To: "a", Rate: rate(100e6), Delay: stDelayAR, Loss: sim.LossConfig{Model: "random", P: stLoss}},
		},
		Hosts:    []HostSpec{{"ha", "a"}, {"hb", "b"}},
		Flows:    []FlowSpec{{Name: "probe", Src: "ha", Dst: "hb", Kind: "cbr", Path: []string{"a", "r", "b"}}},
		Duration: 10 * time.Second, Interval: 100 * time.Millisecond, Seed: 1,
	}
}

// SelfTest measures the emulator against its configuration on a network of
// its own and writes what it found to w: one-way delay (within 1 ms of the
// configured delay plus serialisation), bottleneck rate (within 2 %), random
// loss (within its 99 % confidence interval), and each probe's queueing delay
// as the emulator reports it for the metrics against the one measured end to
// end (within 1 ms for 99 % of the probes). It needs root and takes about 5 s.
//
// On a busy machine the kernel can hold a packet for milliseconds where the
// emulator cannot see it (this kernel does not preempt a task running kernel
// code), so a failed measurement is repeated up to twice, saying so; the test
// fails when all three attempts do.
func SelfTest(ctx context.Context, w io.Writer) error {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		fmt.Fprintf(w, "attempt %d (load average %s)\n", attempt, loadAverage())
		if err = selfTest(ctx, w); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func selfTest(ctx context.Context, w io.Writer) error {
	n, err := Build(ctx, selfTestSpec())
	if err != nil {
		return err
	}
	defer n.Close()
	ha, hb := n.hosts["ha"], n.hosts["hb"]
	fwd, err := listenProbes(hb, 9000)
	if err != nil {
		return err
	}
	rev, err := listenProbes(ha, 9001)
	if err != nil {
		fwd.stop()
		return err
	}
	n.Start(time.Now())
	idleN, loadN, lossSent, err := runSelfTestProbes(ctx, ha, hb)
	time.Sleep(300 * time.Millisecond) // the last probes drain
	fwdRecs, revRecs := fwd.stop(), rev.stop()
	if err != nil {
		return err
	}
	st, links := n.FlowStats("probe"), n.LinkStats()
	if st == nil {
		return fmt.Errorf("self-test: %w", n.Err())
	}
	var fails []error
	check := func(ok bool, format string, a ...any) {
		line := fmt.Sprintf(format, a...)
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			fails = append(fails, errors.New(line))
		}
		fmt.Fprintf(w, "%s %s\n", mark, line)
	}
	if len(fwdRecs) < idleN {
		return fmt.Errorf("self-test: %d of %d idle probes arrived", len(fwdRecs), idleN)
	}
	base := checkDelay(check, fwdRecs[:idleN])
	checkRate(check, fwdRecs[idleN:], loadN)
	checkQueueDelay(check, fwdRecs, st.QueueDelays, base)
	lost := lossSent - len(revRecs)
	mean, sd := float64(lossSent)*stLoss, math.Sqrt(float64(lossSent)*stLoss*(1-stLoss))
	check(math.Abs(float64(lost)-mean) <= z99*sd && int64(lost) == links[3].Losses,
		"loss: %d of %d lost (%.2f %%), configured %.0f %% → 99 %% interval [%.0f, %.0f]; the link counted %d",
		lost, lossSent, 100*float64(lost)/float64(lossSent), 100*stLoss, mean-z99*sd, mean+z99*sd, links[3].Losses)
	for i, c := range n.Counters() {
		check(c.Oversize == 0, "link %s: %d packets read, largest %d bytes, %d over the MTU; %d delivered over %v late (at most %v); %d of 2 threads real-time",
			n.spec.Links[i].Name, c.Read, c.MaxSize, c.Oversize, c.Late, netem.LateThreshold, c.MaxLate.Round(time.Microsecond), c.Realtime)
	}
	return errors.Join(fails...)
}

// runSelfTestProbes sends 100 probes on an idle path, then overloads it at
// 1.3 times the bottleneck for 2.5 s while the loss probes cross the other
// direction.
func runSelfTestProbes(ctx context.Context, ha, hb *Host) (idleN, loadN, lossN int, err error) {
	idle, err := newProbeSender(ha, hb, 9000, stWire-probeHeader, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	defer idle.close()
	var stop atomic.Bool
	context.AfterFunc(ctx, func() { stop.Store(true) })
	idleN = 100
	idle.paced(stWire*8/0.01, idleN, &stop) // one every 10 ms
	time.Sleep(100 * time.Millisecond)
	load, err := newProbeSender(ha, hb, 9000, stWire-probeHeader, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	defer load.close()
	load.seq = 1 << 20
	loss, err := newProbeSender(hb, ha, 9001, 100-probeHeader, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	defer loss.close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		loss.paced(100*8*1000, stLossProbes, &stop) // 1000 a second
	}()
	var loadStop atomic.Bool
	time.AfterFunc(2500*time.Millisecond, func() { loadStop.Store(true) })
	context.AfterFunc(ctx, func() { loadStop.Store(true) })
	load.paced(1.3*stRateRB, 0, &loadStop)
	wg.Wait()
	return idleN, int(load.seq - 1<<20), int(loss.seq), ctx.Err()
}

// checkDelay compares idle probes' one-way delay with the configuration and
// returns their median, the base the queueing check subtracts.
func checkDelay(check func(bool, string, ...any), recs []probeRec) time.Duration {
	owd := make([]time.Duration, len(recs))
	for i, r := range recs {
		owd[i] = r.owd()
	}
	slices.Sort(owd)
	ser := time.Duration(stWire*8/stRateAR*1e9) + time.Duration(stWire*8/stRateRB*1e9)
	want := stDelayAR + stDelayRB + ser
	med, p99 := owd[len(owd)/2], owd[len(owd)*99/100]
	check((med-want).Abs() <= time.Millisecond, "delay: idle one-way delay median %v, p99 %v; configured %v (%v + %v + serialisation %v)",
		med.Round(time.Microsecond), p99.Round(time.Microsecond), want, stDelayAR, stDelayRB, ser)
	return med
}

// checkRate measures the bottleneck's rate from the spacing of the overload
// probes once its queues have filled.
func checkRate(check func(bool, string, ...any), recs []probeRec, sent int) {
	var load []probeRec
	for _, r := range recs {
		if r.seq >= 1<<20 {
			load = append(load, r)
		}
	}
	if len(load) < 100 {
		check(false, "rate: only %d of %d overload probes arrived", len(load), sent)
		return
	}
	first, last := len(load)/4, len(load)-1
	bytes := 0
	for _, r := range load[first+1 : last+1] {
		bytes += r.wire
	}
	rate := float64(bytes) * 8 / (time.Duration(load[last].recv - load[first].recv)).Seconds()
	check(math.Abs(rate/stRateRB-1) <= 0.02, "rate: %.4g bit/s received under overload (%d of %d probes arrived), configured %.4g (%+.2f %%)",
		rate, len(load), sent, float64(stRateRB), 100*(rate/stRateRB-1))
}

// checkQueueDelay compares, probe by probe, the queueing delay the emulator
// recorded for the flow's statistics with the one-way delay measured end to
// end less the idle path's.
func checkQueueDelay(check func(bool, string, ...any), recs []probeRec, reported []float32, base time.Duration) {
	if len(recs) != len(reported) {
		check(false, "queue delay: the receiver got %d probes, the emulator delivered %d", len(recs), len(reported))
		return
	}
	diffs := make([]time.Duration, len(recs))
	var maxQ time.Duration
	for i, r := range recs {
		q := time.Duration(float64(reported[i]) * 1e9)
		maxQ = max(maxQ, q)
		diffs[i] = (r.owd() - base - q).Abs()
	}
	slices.Sort(diffs)
	p50, p99 := diffs[len(diffs)/2], diffs[len(diffs)*99/100]
	check(p99 <= time.Millisecond, "queue delay: reported vs measured per probe over %d probes (up to %v queued): |difference| median %v, p99 %v",
		len(recs), maxQ.Round(time.Microsecond), p50.Round(time.Microsecond), p99.Round(time.Microsecond))
}
