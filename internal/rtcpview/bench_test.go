package rtcpview

import (
	"testing"

	"github.com/pion/rtcp"
)

// Each benchmark reads one packet the way its consumer will: the view parses and walks all of it
// into preallocated space; "pion" is the rtcp.Unmarshal that GetRTCPPackets runs today.

func benchRaw(b *testing.B, p rtcp.Packet) []byte {
	raw, err := p.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkTWCC100 decodes the feedback about 100 packets (one feedback packet from pion's
// recorder, the receive side browsers mimic).
func BenchmarkTWCC100(b *testing.B) {
	fbs := audioFeedback()
	if len(fbs) != 1 || fbs[0].(*rtcp.TransportLayerCC).PacketStatusCount != 100 {
		b.Fatalf("want one feedback about 100 packets, got %d", len(fbs))
	}
	raw := benchRaw(b, fbs[0])
	b.Run("view", func(b *testing.B) {
		statuses := make([]Status, 0, 128)
		b.ReportAllocs()
		for b.Loop() {
			it := Iterate(raw)
			p, _ := it.Next()
			fb, err := ParseTWCC(p)
			if err != nil {
				b.Fatal(err)
			}
			statuses = fb.AppendStatuses(statuses[:0])
		}
		if len(statuses) != 100 {
			b.Fatalf("%d statuses", len(statuses))
		}
	})
	b.Run("viewNext", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			it := Iterate(raw)
			p, _ := it.Next()
			fb, err := ParseTWCC(p)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			st := fb.Statuses()
			for _, ok := st.Next(); ok; _, ok = st.Next() {
				n++
			}
			if n != 100 {
				b.Fatalf("%d statuses", n)
			}
		}
	})
	b.Run("pion", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rtcp.Unmarshal(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkRR1(b *testing.B) {
	raw := benchRaw(b, &rtcp.ReceiverReport{SSRC: 1, Reports: blocks(1)})
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		var loss uint8
		for b.Loop() {
			it := Iterate(raw)
			p, _ := it.Next()
			rr, err := ParseReceiverReport(p)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < rr.Reports.Len(); i++ {
				loss += rr.Reports.At(i).FractionLost
			}
		}
		_ = loss
	})
	b.Run("pion", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rtcp.Unmarshal(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNACK reads a NACK of two pairs asking for 7 packets.
func BenchmarkNACK(b *testing.B) {
	raw := benchRaw(b, &rtcp.TransportLayerNack{SenderSSRC: 1, MediaSSRC: 2, Nacks: []rtcp.NackPair{
		{PacketID: 1000, LostPackets: 0b101}, {PacketID: 1100, LostPackets: 0b1000_0000_0000_0011},
	}})
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			it := Iterate(raw)
			p, _ := it.Next()
			n, err := ParseNACK(p)
			if err != nil {
				b.Fatal(err)
			}
			lost := n.Lost()
			c := 0
			for _, ok := lost.Next(); ok; _, ok = lost.Next() {
				c++
			}
			if c != 7 {
				b.Fatalf("%d lost", c)
			}
		}
	})
	b.Run("pion", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rtcp.Unmarshal(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCompound walks a browser-like compound (RR, SDES, REMB, TWCC) through every view.
func BenchmarkCompound(b *testing.B) {
	raw, err := rtcp.Marshal([]rtcp.Packet{
		&rtcp.ReceiverReport{SSRC: 1, Reports: blocks(1)}, rtcp.NewCNAMESourceDescription(1, "browser"),
		&rtcp.ReceiverEstimatedMaximumBitrate{SenderSSRC: 1, Bitrate: 2e6, SSRCs: []uint32{5}}, audioFeedback()[0],
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("view", func(b *testing.B) {
		statuses := make([]Status, 0, 128)
		b.ReportAllocs()
		for b.Loop() {
			it := Iterate(raw)
			for p, ok := it.Next(); ok; p, ok = it.Next() {
				statuses, _ = visit(p, statuses[:0], nil)
			}
		}
	})
	b.Run("pion", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rtcp.Unmarshal(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
