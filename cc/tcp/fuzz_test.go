package tcp

import (
	"testing"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

func FuzzAcks(f *testing.F) {
	f.Add([]byte{0, 1, 0xb4, 0x05, 0, 0x40, 0, 0, 1, 100, 0, 0, 0, 1, 50, 0, 0, 0, 0, 1, 0, 0, 0, 0x40})
	f.Add([]byte{2, 3, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0x80})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range []Variant{Reno, NewReno, Cubic} {
			c := New(v)
			for _, a := range cctest.FuzzAckSequence(data) {
				switch a.Kind {
				case 1:
					c.OnLoss(a.Now, a.InFlight)
				case 2:
					c.OnTimeout(a.Now, a.InFlight)
				default:
					c.OnAck(a.Ack)
				}
				if c.Cwnd() < 1 || c.RTO() <= 0 {
					t.Fatalf("%v: cwnd %d RTO %v after %+v", v, c.Cwnd(), c.RTO(), a)
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

func BenchmarkRenoAck(b *testing.B)    { benchWindow(b, New(Reno)) }
func BenchmarkNewRenoAck(b *testing.B) { benchWindow(b, New(NewReno)) }
func BenchmarkCubicAck(b *testing.B)   { benchWindow(b, New(Cubic)) }
