package sim

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc/tcp"
)

// Two NewReno flows with SACK on a 10 Mbit/s bottleneck with a one-BDP
// queue: they fill the link and share it about equally.
func TestNewRenoPairSharesAndFills(t *testing.T) {
	s, fwd, rev := duplex(t, 1, 60*time.Second, LinkConfig{Rate: ConstantRate(10e6), Delay: 20 * time.Millisecond,
		Queue: Limit{LimitPackets, 35}})
	var flows []*TCPFlow
	for _, name := range []string{"a", "b"} {
		f, err := NewTCPFlow(s, TCPConfig{Name: name, Forward: fwd, Reverse: rev, Stop: 60 * time.Second,
			Controller: tcp.New(tcp.NewReno, tcp.WithMSS(1448))})
		if err != nil {
			t.Fatal(err)
		}
		flows = append(flows, f)
	}
	_ = s.Run()
	if u := fwd[0].Stats.Utilization(60 * time.Second); u < 0.95 {
		t.Fatalf("utilisation %v", u)
	}
	a, b := float64(flows[0].Stats().GoodputBytes), float64(flows[1].Stats().GoodputBytes)
	if r := a / b; r < 0.8 || r > 1.25 {
		t.Fatalf("goodput ratio %v", r)
	}
}

// The receive window caps a flow at rwnd/RTT whatever its cwnd.
func TestReceiveWindowLimitsRate(t *testing.T) {
	s, fwd, rev := duplex(t, 1, 20*time.Second, LinkConfig{Rate: ConstantRate(100e6), Delay: 50 * time.Millisecond})
	f, _ := NewTCPFlow(s, TCPConfig{Name: "a", Forward: fwd, Reverse: rev, Stop: 20 * time.Second, RcvWindow: 64 * 1448,
		Controller: tcp.New(tcp.Cubic, tcp.WithMSS(1448))})
	_ = s.Run()
	// 64 segments per 100 ms RTT = 7.4 Mbit/s of payload, after slow start.
	good := float64(f.Stats().GoodputBytes) * 8 / 20
	if good > 64*1448*8/0.1 || good < 0.9*64*1448*8/0.1 {
		t.Fatalf("goodput %v", good)
	}
}

// SACK repairs a whole burst of losses in one round trip with one window
// reduction; without SACK NewReno needs one round trip per hole.
func TestSACKRepairsBurstInOneEpisode(t *testing.T) {
	run := func(noSACK bool) *TCPFlow {
		s, fwd, rev := duplex(t, 1, 10*time.Second, LinkConfig{Rate: ConstantRate(10e6), Delay: 20 * time.Millisecond,
			Loss: LossConfig{Model: "gilbert-elliott", P: 0.002, R: 0.5, LossBad: 1}})
		f, _ := NewTCPFlow(s, TCPConfig{Name: "a", Forward: fwd, Reverse: rev, Stop: 10 * time.Second, NoSACK: noSACK,
			Controller: tcp.New(tcp.NewReno, tcp.WithMSS(1448))})
		_ = s.Run()
		return f
	}
	withSACK, without := run(false), run(true)
	gs, gn := float64(withSACK.Stats().GoodputBytes), float64(without.Stats().GoodputBytes)
	if gs <= gn {
		t.Fatalf("goodput with SACK %v not above without %v under bursty loss", gs, gn)
	}
}
