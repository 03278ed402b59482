package gcc

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

// benchRate measures one feedback message of 20 packets (OnPacketSent for each, then OnFeedback
// and OnTick), after a warm-up that lets every buffer reach its steady size. ns/pkt is the cost
// per packet reported.
func benchRate(b *testing.B, c cc.RateController) {
	stream := cctest.NewFeedbackStream(20, 5*time.Millisecond)
	step := func() {
		fb := stream.Next()
		for i := range fb.Packets {
			p := &fb.Packets[i]
			c.OnPacketSent(cc.SentPacket{SeqNo: p.SeqNo, SendTime: p.SendTime, Size: p.Size})
		}
		c.OnFeedback(fb)
		c.OnTick(fb.Now)
	}
	for i := 0; i < 2000; i++ {
		step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*stream.PerFeedback()), "ns/pkt")
}

func BenchmarkSenderFeedback(b *testing.B)      { benchRate(b, NewSender()) }
func BenchmarkDraftSenderFeedback(b *testing.B) { benchRate(b, NewDraftSender()) }

func BenchmarkReceiverPacket(b *testing.B) {
	r := NewReceiver()
	stream := cctest.NewFeedbackStream(20, 5*time.Millisecond)
	step := func() {
		fb := stream.Next()
		for i := range fb.Packets {
			p := &fb.Packets[i]
			r.OnPacket(cc.ReceivedPacket{SeqNo: p.SeqNo, SendTime: p.SendTime, Arrival: p.Arrival, Size: p.Size})
		}
		r.REMB(fb.Now)
	}
	for i := 0; i < 2000; i++ {
		step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*stream.PerFeedback()), "ns/pkt")
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	for name, c := range map[string]cc.RateController{"send-side": NewSender(), "draft": NewDraftSender()} {
		stream := cctest.NewFeedbackStream(20, 5*time.Millisecond)
		step := func() {
			fb := stream.Next()
			for i := range fb.Packets {
				p := &fb.Packets[i]
				c.OnPacketSent(cc.SentPacket{SeqNo: p.SeqNo, SendTime: p.SendTime, Size: p.Size})
			}
			c.OnFeedback(fb)
			c.OnTick(fb.Now)
			_ = c.State()
		}
		for i := 0; i < 500; i++ {
			step()
		}
		if n := testing.AllocsPerRun(200, step); n != 0 {
			t.Errorf("%s: %.1f allocations per feedback in steady state, want 0", name, n)
		}
	}
}
