package ledbat

import (
	"testing"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

func FuzzAcks(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 0, 0, 0xb4, 0x05, 0, 0, 0, 0, 0, 1, 100, 0, 0, 0, 1, 50, 0, 0, 0})
	f.Add([]byte{2, 3, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0x80})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*Controller{New(), New(WithPlusPlus())} {
			for _, a := range cctest.FuzzAckSequence(data) {
				switch a.Kind {
				case 1:
					c.OnLoss(a.Now, a.InFlight)
				case 2:
					c.OnTimeout(a.Now, a.InFlight)
				default:
					c.OnAck(a.Ack)
				}
				if c.Cwnd() < c.cfg.MSS || c.RTO() <= 0 {
					t.Fatalf("cwnd %d RTO %v after %+v", c.Cwnd(), c.RTO(), a)
				}
				if err := cctest.CheckState(c.State()); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func benchWindow(b *testing.B, c cc.WindowController) {
	s := &cctest.AckStream{MSS: 1460}
	for i := 0; i < 5000; i++ {
		c.OnAck(s.Next(c.Cwnd()))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.OnAck(s.Next(c.Cwnd()))
	}
}

func BenchmarkRFC6817Ack(b *testing.B)  { benchWindow(b, New()) }
func BenchmarkPlusPlusAck(b *testing.B) { benchWindow(b, New(WithPlusPlus())) }
