package nada

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

func seedCorpus(f *testing.F) {
	var b []byte
	for i := 0; i < 40; i++ {
		b = append(b, byte(i%3), byte(i), 0, 1)
		b = binary.LittleEndian.AppendUint32(b, uint32(10*i))
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint32(b, uint32(10*i+30+i%7))
		b = append(b, 0xb0, 0x04)
	}
	f.Add(b)
	f.Add([]byte{0xff, 0x7f, 3, 0xff, 0xff, 0xff, 0x7f, 3, 0, 0, 0, 0x80})
	f.Add([]byte{})
}

func FuzzSenderFeedback(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewSender()
		for _, fb := range cctest.FuzzFeedback(data) {
			s.OnFeedback(fb)
			if len(fb.Packets) > 0 {
				s.OnRTT(fb.Now, fb.Now-fb.Packets[0].SendTime)
			}
			s.OnTick(fb.Now)
			if err := cctest.CheckRates(s.TargetRate(), s.PacingRate()); err != nil {
				t.Fatal(err)
			}
			if err := cctest.CheckState(s.State()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzReceiverPackets(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReceiver()
		s := NewSender()
		for i, p := range cctest.FuzzReceived(data) {
			r.OnPacket(p)
			if i%8 == 7 {
				rep := r.Report(p.Arrival)
				s.OnReport(p.Arrival+10*time.Millisecond, rep)
				if rep.XCurr < 0 || rep.RRecv < 0 || rep.QueueDelay < 0 {
					t.Fatalf("report out of range: %+v", rep)
				}
				if err := cctest.CheckState(s.State()); err != nil {
					t.Fatal(err)
				}
			}
			if err := cctest.CheckState(r.State()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func BenchmarkSenderFeedback(b *testing.B) {
	s := NewSender()
	stream := cctest.NewFeedbackStream(20, 5*time.Millisecond)
	step := func() {
		fb := stream.Next()
		s.OnFeedback(fb)
		s.OnTick(fb.Now)
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

func BenchmarkReceiverPacket(b *testing.B) {
	r := NewReceiver()
	stream := cctest.NewFeedbackStream(20, 5*time.Millisecond)
	step := func() {
		fb := stream.Next()
		for i := range fb.Packets {
			p := &fb.Packets[i]
			if !p.Lost {
				r.OnPacket(cc.ReceivedPacket{SeqNo: p.SeqNo, SendTime: p.SendTime, Arrival: p.Arrival, Size: p.Size, CE: p.CE})
			}
		}
		r.Report(fb.Packets[len(fb.Packets)-1].Arrival)
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
	s := NewSender()
	stream := cctest.NewFeedbackStream(20, 5*time.Millisecond)
	step := func() {
		fb := stream.Next()
		s.OnFeedback(fb)
		_ = s.State()
	}
	for i := 0; i < 500; i++ {
		step()
	}
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Errorf("%.1f allocations per feedback in steady state, want 0", n)
	}
}
