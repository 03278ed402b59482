package sim

import (
	"math"
	"testing"
	"time"
)

func TestTCPWindowLimitedThroughput(t *testing.T) {
	// 10 segments per 100 ms RTT on a fast link: 10*1500*8/0.1 = 1.2 Mbit/s.
	s, fwd, rev := duplex(t, 1, 20*time.Second, LinkConfig{Rate: ConstantRate(100e6), Delay: 50 * time.Millisecond})
	w := &fixedWindow{cwnd: 10 * 1448}
	f, err := NewTCPFlow(s, TCPConfig{Name: "t", Forward: fwd, Reverse: rev, Stop: 20 * time.Second, Controller: w})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Run()
	rate := float64(f.Stats().RecvBytes) * 8 / 20
	if math.Abs(rate-1.2e6) > 0.02*1.2e6 {
		t.Fatalf("rate %v, want ~1.2 Mbit/s", rate)
	}
}

func TestTCPCapacityLimitedThroughput(t *testing.T) {
	s, fwd, rev := duplex(t, 1, 20*time.Second, LinkConfig{Rate: ConstantRate(1e6), Delay: 20 * time.Millisecond})
	w := &fixedWindow{cwnd: 40 * 1448}
	f, _ := NewTCPFlow(s, TCPConfig{Name: "t", Forward: fwd, Reverse: rev, Stop: 20 * time.Second, Controller: w})
	_ = s.Run()
	if u := fwd[0].Stats.Utilization(20 * time.Second); u < 0.99 {
		t.Fatalf("utilization %v", u)
	}
	// Goodput is the payload share of the wire rate.
	good := float64(f.Stats().GoodputBytes) * 8 / 20
	if math.Abs(good-1e6*1448/1500) > 0.02e6 {
		t.Fatalf("goodput %v", good)
	}
}

func TestTCPRecoversFromLoss(t *testing.T) {
	for _, noSACK := range []bool{false, true} {
		s, fwd, rev := duplex(t, 3, 30*time.Second, LinkConfig{Rate: ConstantRate(10e6), Delay: 20 * time.Millisecond,
			Loss: LossConfig{Model: "random", P: 0.01}})
		w := &fixedWindow{cwnd: 20 * 1448}
		f, _ := NewTCPFlow(s, TCPConfig{Name: "t", Forward: fwd, Reverse: rev, Stop: 30 * time.Second, Controller: w, NoSACK: noSACK})
		_ = s.Run()
		checkRecovered(t, f, w, noSACK)
	}
}

func checkRecovered(t *testing.T, f *TCPFlow, w *fixedWindow, noSACK bool) {
	t.Helper()
	st := f.Stats()
	detected := w.losses // the transport found the losses (SACK)
	if noSACK {
		detected = w.retransmits // the controller's duplicate-ACK rule did
	}
	// Timeouts only repair lost retransmissions, which RFC 6675 (like ns-3)
	// cannot detect otherwise: about 1% of the retransmissions here.
	if st.Dropped == 0 || detected == 0 || w.timeouts > int(st.Dropped/20) {
		t.Fatalf("sack=%v: dropped %d detected %d timeouts %d", !noSACK, st.Dropped, detected, w.timeouts)
	}
	// Every lost segment was repaired: the receiver's cumulative point is
	// within one window of the highest segment sent.
	if f.high-f.rx.nxt > 20 {
		t.Fatalf("receiver at %d, sender sent up to %d", f.rx.nxt, f.high)
	}
	// Goodput counts each segment once.
	if st.GoodputBytes > (f.high-1)*1448 {
		t.Fatalf("goodput %d exceeds unique data %d", st.GoodputBytes, (f.high-1)*1448)
	}
}

func TestTCPDelayedAckHalvesAcks(t *testing.T) {
	count := func(every int) int64 {
		s, fwd, rev := duplex(t, 1, 5*time.Second, LinkConfig{Rate: ConstantRate(10e6), Delay: 10 * time.Millisecond})
		w := &fixedWindow{cwnd: 20 * 1448}
		_, _ = NewTCPFlow(s, TCPConfig{Name: "t", Forward: fwd, Reverse: rev, Stop: 5 * time.Second, Controller: w, DelayedAck: every})
		_ = s.Run()
		return rev[0].Stats.TxPackets
	}
	one, two := count(1), count(2)
	if r := float64(two) / float64(one); r < 0.45 || r > 0.55 {
		t.Fatalf("acks with delayed ACK %d vs %d", two, one)
	}
}

func TestOnOffSendsFiles(t *testing.T) {
	s, fwd, rev := duplex(t, 1, 60*time.Second, LinkConfig{Rate: ConstantRate(2e6), Delay: 25 * time.Millisecond})
	w := &fixedWindow{cwnd: 20 * 1448}
	f, _ := NewTCPFlow(s, TCPConfig{Name: "t", Forward: fwd, Reverse: rev, Stop: 60 * time.Second, Controller: w,
		OnOff: &OnOffConfig{SizeMin: 30000, SizeMax: 50000, OffMean: 2 * time.Second, StartOn: true}})
	_ = s.Run()
	// About 60 s / (2 s off + ~0.3 s on) files.
	if f.Files < 15 || f.Files > 40 {
		t.Fatalf("%d files", f.Files)
	}
	perFile := float64(f.Stats().GoodputBytes) / float64(f.Files)
	if perFile < 28000 || perFile > 52000 {
		t.Fatalf("%v bytes per file", perFile)
	}
}
