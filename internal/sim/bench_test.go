package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc/tcp"
)

// dumbbell builds the benchmark topology: n senders, 100 Mbit/s access links
// with 1 ms delay, a 10 Mbit/s bottleneck with 20 ms delay and a 100-packet
// queue, 100 Mbit/s egress links; NewReno bulk flows.
func dumbbell(tb testing.TB, n int, dur time.Duration) *Sim {
	s := New(Config{Seed: 1, Duration: dur})
	add := func(name, from, to string, bps float64, delay time.Duration, q float64) *Link {
		l, err := s.AddLink(LinkConfig{Name: name, From: from, To: to, Rate: ConstantRate(bps), Delay: delay,
			Queue: Limit{LimitPackets, q}})
		if err != nil {
			tb.Fatal(err)
		}
		return l
	}
	bn := add("bn", "r1", "r2", 10e6, 20*time.Millisecond, 100)
	bnr := add("bn-rev", "r2", "r1", 10e6, 20*time.Millisecond, 100)
	for i := 0; i < n; i++ {
		src, dst := fmt.Sprint("s", i), fmt.Sprint("d", i)
		a := add("a"+src, src, "r1", 100e6, time.Millisecond, 1000)
		ar := add("a"+src+"-rev", "r1", src, 100e6, time.Millisecond, 1000)
		e := add("e"+dst, "r2", dst, 100e6, time.Millisecond, 1000)
		er := add("e"+dst+"-rev", dst, "r2", 100e6, time.Millisecond, 1000)
		_, err := NewTCPFlow(s, TCPConfig{Name: fmt.Sprint("f", i), Forward: []*Link{a, bn, e}, Reverse: []*Link{er, bnr, ar},
			Stop: dur, Controller: tcp.New(tcp.NewReno, tcp.WithMSS(1448))})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// BenchmarkDumbbell100s is the performance goal: 100 simulated
// seconds of a 10 Mbit/s dumbbell with six flows.
func BenchmarkDumbbell100s(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s := dumbbell(b, 6, 100*time.Second)
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Events()), "events/op")
	}
}
