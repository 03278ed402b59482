package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// Two unresponsive CBR flows overload a 1 Mbit/s link: the summary's
// numbers must agree with each other and with the link's arithmetic.
func TestSummarizeCBROverload(t *testing.T) {
	s := sim.New(sim.Config{Seed: 1, Duration: 20 * time.Second})
	l, _ := s.AddLink(sim.LinkConfig{Name: "bn", From: "a", To: "b", Rate: sim.ConstantRate(1e6),
		Delay: 10 * time.Millisecond, Queue: sim.Limit{Unit: sim.LimitPackets, Value: 50}})
	path := []*sim.Link{l}
	_, _ = sim.NewCBRFlow(s, sim.CBRConfig{Name: "small", Forward: path, Stop: 20 * time.Second, Rate: 300e3, PacketSize: 1000})
	_, _ = sim.NewCBRFlow(s, sim.CBRConfig{Name: "big", Forward: path, Stop: 20 * time.Second, Rate: 1.2e6, PacketSize: 1000})
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	sum := Summarize(RecordingOf(s), Meta{Scenario: "cbr"})
	if u := sum.Links[0].Utilization; u < 0.99 || u > 1.0 {
		t.Fatalf("utilisation %v", u)
	}
	// Max-min: the 300 kbit/s flow gets its demand, the other the rest.
	small, big := sum.Flows[0], sum.Flows[1]
	if small.FairShareBps != 300e3 || big.FairShareBps != 700e3 {
		t.Fatalf("fair shares %v %v", small.FairShareBps, big.FairShareBps)
	}
	total := small.ThroughputBps + big.ThroughputBps
	if math.Abs(total-1e6) > 0.01e6 {
		t.Fatalf("throughputs add to %v", total)
	}
	// Every drop is some flow's loss, and a third of what is offered
	// (1.5 Mbit/s into 1 Mbit/s) is lost; drop-tail need not split the loss
	// evenly between periodic flows (phase effects).
	var lost, sent int64
	for _, f := range s.Flows() {
		lost += f.Stats().Dropped
		sent += f.Stats().SentPackets
	}
	if lost != sum.Links[0].Drops {
		t.Errorf("flows lost %d packets, the link dropped %d", lost, sum.Links[0].Drops)
	}
	if r := float64(lost) / float64(sent); math.Abs(r-1.0/3) > 0.02 { // the first 50 packets fill the queue
		t.Errorf("overall loss %v", r)
	}
	// The queue stays full: about 49 packets of 8 ms each ahead of every
	// packet that gets in.
	if p := big.QueueDelayMs.P50; p < 380 || p > 400 {
		t.Errorf("median queuing delay %v ms", p)
	}
	if sum.JainIndex != nil {
		t.Error("Jain over media flows reported without media flows")
	}
	fs, ls := Series(RecordingOf(s))
	if len(fs[0].T) != 200 || len(ls[0].Capacity) != 200 || ls[0].Capacity[5] != 1e6 {
		t.Fatalf("series lengths %d %d", len(fs[0].T), len(ls[0].Capacity))
	}
	if v, err := Lookup(sum, "flows.big.loss_ratio"); err != nil || v != big.LossRatio {
		t.Fatalf("lookup %v %v", v, err)
	}
	if _, err := Lookup(sum, "flows.nothing.loss_ratio"); err == nil {
		t.Fatal("lookup of a missing flow succeeded")
	}
}
