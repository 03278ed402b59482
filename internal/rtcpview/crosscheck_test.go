package rtcpview

import (
	"testing"
	"time"

	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/rtcp"
)

// sample is one packet (or compound) marshalled by pion/rtcp, used by the cross-checks, as fuzz
// seeds and by the benchmarks.
type sample struct {
	name  string
	pkts  []rtcp.Packet
	kinds []Kind
}

func blocks(n int) []rtcp.ReceptionReport {
	out := make([]rtcp.ReceptionReport, n)
	for i := range out {
		out[i] = rtcp.ReceptionReport{
			SSRC: 0x1000 + uint32(i), FractionLost: uint8(37 * i), LastSequenceNumber: 0x0001fff0 + uint32(i),
			Jitter: 90 * uint32(i), LastSenderReport: 0xabcd0000 + uint32(i), Delay: 65536 * uint32(i),
			// Cumulative loss is signed 24-bit: 0xfffffe is -2 (more duplicates than losses).
			TotalLost: []uint32{5, 0xfffffe, 0x7fffff, 0x800000}[i%4],
		}
	}
	return out
}

// tccPacket builds a TWCC feedback with the header pion's Marshal needs filled in (length and
// padding), as pion's own feedback recorder does.
func tccPacket(base, count uint16, ref uint32, chunks []rtcp.PacketStatusChunk, deltas ...*rtcp.RecvDelta) *rtcp.TransportLayerCC {
	fb := &rtcp.TransportLayerCC{
		SenderSSRC: 0x11, MediaSSRC: 0x22, BaseSequenceNumber: base, PacketStatusCount: count,
		ReferenceTime: ref, FbPktCount: 9, PacketChunks: chunks, RecvDeltas: deltas,
	}
	size := fb.MarshalSize()
	fb.Header = rtcp.Header{
		Count: rtcp.FormatTCC, Type: rtcp.TypeTransportSpecificFeedback,
		Padding: size != unpaddedLen(fb), Length: uint16(size/4 - 1),
	}
	return fb
}

// unpaddedLen is the feedback's length before padding: header, fixed part, chunks and deltas.
func unpaddedLen(fb *rtcp.TransportLayerCC) int {
	n := 20 + 2*len(fb.PacketChunks)
	for _, d := range fb.RecvDeltas {
		if d.Type == rtcp.TypeTCCPacketReceivedLargeDelta {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func small(us int64) *rtcp.RecvDelta {
	return &rtcp.RecvDelta{Type: rtcp.TypeTCCPacketReceivedSmallDelta, Delta: us}
}
func large(us int64) *rtcp.RecvDelta {
	return &rtcp.RecvDelta{Type: rtcp.TypeTCCPacketReceivedLargeDelta, Delta: us}
}
func run(symbol, n uint16) *rtcp.RunLengthChunk {
	return &rtcp.RunLengthChunk{PacketStatusSymbol: symbol, RunLength: n}
}
func vector(twoBit bool, symbols ...uint16) *rtcp.StatusVectorChunk {
	size := uint16(rtcp.TypeTCCSymbolSizeOneBit)
	if twoBit {
		size = rtcp.TypeTCCSymbolSizeTwoBit
	}
	return &rtcp.StatusVectorChunk{SymbolSize: size, SymbolList: symbols}
}

const (
	notRecv = rtcp.TypeTCCPacketNotReceived
	smallD  = rtcp.TypeTCCPacketReceivedSmallDelta
	largeD  = rtcp.TypeTCCPacketReceivedLargeDelta
)

// recordedFeedback is what pion's TWCC recorder (strata's receive side) sends for the arrivals of
// internal/bwe's TestDecodeTWCCMatchesRecordedArrivals: 300 packets crossing the 16-bit wrap,
// every tenth lost, 5 ms apart with a slowly growing queue.
func recordedFeedback() []rtcp.Packet {
	rec := twcc.NewRecorder(1)
	for i := 0; i < 300; i++ {
		if i%10 == 3 {
			continue
		}
		at := time.Duration(i)*5*time.Millisecond + time.Duration(i/4)*250*time.Microsecond + 40*time.Millisecond
		rec.Record(7, uint16(65400+i), at.Microseconds())
	}
	return rec.BuildFeedbackPacket()
}

// bweSeedFeedback is the seed of internal/bwe's FuzzDecodeTWCC: 40 packets 3 ms apart, every
// seventh lost.
func bweSeedFeedback() []rtcp.Packet {
	rec := twcc.NewRecorder(1)
	for i := 0; i < 40; i++ {
		if i%7 != 0 {
			rec.Record(1, uint16(i), int64(i)*3000)
		}
	}
	return rec.BuildFeedbackPacket()
}

// reorderedFeedback has arrivals that go back in time and jump by more than 64 ms, so the recorder
// needs large (and negative) deltas and two-bit status vectors.
func reorderedFeedback() []rtcp.Packet {
	rec := twcc.NewRecorder(1)
	at := int64(1_000_000)
	for i := 0; i < 60; i++ {
		switch {
		case i%9 == 4:
			at -= 3000 // arrived before the previous one
		case i%13 == 0:
			at += 90_000 // a 90 ms gap: beyond a small delta
		default:
			at += 1250
		}
		if i%7 != 5 {
			rec.Record(3, uint16(100+i), at)
		}
	}
	return rec.BuildFeedbackPacket()
}

// audioFeedback is ~100 packets at 20 ms spacing from several streams, all received: the feedback
// a subscriber's browser sends in the audio conference the package was written for.
func audioFeedback() []rtcp.Packet {
	rec := twcc.NewRecorder(1)
	for i := 0; i < 100; i++ {
		rec.Record(5, uint16(4000+i), int64(i)*1000+int64(i%3)*250)
	}
	return rec.BuildFeedbackPacket()
}

func samples() []sample {
	sr := &rtcp.SenderReport{SSRC: 0xdeadbeef, NTPTime: 0xe9d6_1234_8000_0001, RTPTime: 0xfffffff0,
		PacketCount: 4242, OctetCount: 1_000_000, Reports: blocks(2), ProfileExtensions: []byte{1, 2, 3, 4}}
	rr := &rtcp.ReceiverReport{SSRC: 0xcafe, Reports: blocks(4)}
	rr1 := &rtcp.ReceiverReport{SSRC: 0xcafe, Reports: blocks(1)}
	nack := &rtcp.TransportLayerNack{SenderSSRC: 1, MediaSSRC: 0x5555, Nacks: []rtcp.NackPair{
		{PacketID: 100, LostPackets: 0}, {PacketID: 65530, LostPackets: 0xffff}, {PacketID: 7, LostPackets: 0b1000_0000_0000_0101},
	}}
	pli := &rtcp.PictureLossIndication{SenderSSRC: 2, MediaSSRC: 0x7777}
	fir := &rtcp.FullIntraRequest{SenderSSRC: 3, FIR: []rtcp.FIREntry{{SSRC: 0x7777, SequenceNumber: 9}, {SSRC: 0x8888, SequenceNumber: 255}}}
	remb := &rtcp.ReceiverEstimatedMaximumBitrate{SenderSSRC: 4, Bitrate: 1_234_567, SSRCs: []uint32{0x7777, 0x8888}}
	rembHuge := &rtcp.ReceiverEstimatedMaximumBitrate{SenderSSRC: 4, Bitrate: 0x3FFFFp+63}
	sdes := rtcp.NewCNAMESourceDescription(0xcafe, "strata")
	bye := &rtcp.Goodbye{Sources: []uint32{0xcafe}}

	out := []sample{
		{"SR", []rtcp.Packet{sr}, []Kind{KindSR}},
		{"RR4", []rtcp.Packet{rr}, []Kind{KindRR}},
		{"RR1", []rtcp.Packet{rr1}, []Kind{KindRR}},
		{"NACK", []rtcp.Packet{nack}, []Kind{KindNACK}},
		{"PLI", []rtcp.Packet{pli}, []Kind{KindPLI}},
		{"FIR", []rtcp.Packet{fir}, []Kind{KindFIR}},
		{"REMB", []rtcp.Packet{remb}, []Kind{KindREMB}},
		{"REMBmax", []rtcp.Packet{rembHuge}, []Kind{KindREMB}},
		// TWCC, by chunk kind.
		{"TWCCrunLengths", []rtcp.Packet{tccPacket(65530, 20, 0x123456, []rtcp.PacketStatusChunk{
			run(smallD, 4), run(notRecv, 6), run(largeD, 10),
		}, small(250), small(63750), small(0), small(1000), large(-8192000), large(8191750),
			large(-250), large(0), large(64000), large(1), large(2), large(3), large(4), large(5))}, []Kind{KindTWCC}},
		{"TWCConeBit", []rtcp.Packet{tccPacket(10, 14, 1, []rtcp.PacketStatusChunk{
			vector(false, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0),
		}, small(250), small(500), small(750), small(1000), small(1250), small(1500), small(1750), small(2000))}, []Kind{KindTWCC}},
		{"TWCCtwoBit", []rtcp.Packet{tccPacket(65535, 7, 0xffffff, []rtcp.PacketStatusChunk{
			vector(true, smallD, largeD, notRecv, largeD, smallD, notRecv, smallD),
		}, small(2500), large(-64000), large(100000), small(250), small(0))}, []Kind{KindTWCC}},
		// The count ends inside the last chunk: 3 of 7 symbols and 5 of a run of 100 count.
		{"TWCCcountMidChunk", []rtcp.Packet{tccPacket(500, 8, 2, []rtcp.PacketStatusChunk{
			vector(true, smallD, largeD, smallD, notRecv, notRecv, notRecv, notRecv), run(smallD, 100),
		}, small(250), large(-500), small(750), small(1), small(2), small(3), small(4), small(5))}, []Kind{KindTWCC}},
		{"TWCCempty", []rtcp.Packet{tccPacket(1, 0, 2, nil)}, []Kind{KindTWCC}},
		{"compound", []rtcp.Packet{rr, sdes, nack, pli, fir, remb, audioFeedback()[0], bye},
			[]Kind{KindRR, KindOther, KindNACK, KindPLI, KindFIR, KindREMB, KindTWCC, KindOther}},
		{"compoundSR", []rtcp.Packet{sr, sdes, reorderedFeedback()[0]}, []Kind{KindSR, KindOther, KindTWCC}},
	}
	for name, fbs := range map[string][]rtcp.Packet{"recorded": recordedFeedback(), "bweSeed": bweSeedFeedback(), "reordered": reorderedFeedback(), "audio": audioFeedback()} {
		for _, p := range fbs {
			out = append(out, sample{"TWCC" + name, []rtcp.Packet{p}, []Kind{KindTWCC}})
		}
	}
	return out
}

func (s sample) raw(t testing.TB) []byte {
	raw, err := rtcp.Marshal(s.pkts)
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	return raw
}

// TestViewsAgreeWithPion marshals every sample with pion/rtcp, parses it back with pion and with
// the views, and compares field by field, compound packets sub-packet by sub-packet.
func TestViewsAgreeWithPion(t *testing.T) {
	for _, s := range samples() {
		t.Run(s.name, func(t *testing.T) {
			raw := s.raw(t)
			want, err := rtcp.Unmarshal(raw)
			if err != nil {
				t.Fatalf("pion rejects its own packet: %v", err)
			}
			it := Iterate(raw)
			i := 0
			for p, ok := it.Next(); ok; p, ok = it.Next() {
				if i >= len(want) {
					t.Fatalf("more sub-packets than pion's %d", len(want))
				}
				if p.Kind() != s.kinds[i] {
					t.Errorf("sub-packet %d is %v, want %v", i, p.Kind(), s.kinds[i])
				}
				if diff := agreeWithPion(p, want[i]); diff != "" {
					t.Errorf("sub-packet %d: %s", i, diff)
				}
				i++
			}
			if it.Err() != nil || i != len(want) {
				t.Fatalf("iterated %d sub-packets (err %v), pion %d", i, it.Err(), len(want))
			}
		})
	}
}

// TestRecordedFeedbackMatchesArrivals decodes the recorder's feedback for internal/bwe's test
// arrivals and checks, independently of pion's parser, that every packet's fate and inter-arrival
// time come out as recorded, across the 16-bit wrap.
func TestRecordedFeedbackMatchesArrivals(t *testing.T) {
	var statuses []Status
	for _, q := range recordedFeedback() {
		raw, err := q.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		it := Iterate(raw)
		p, _ := it.Next()
		fb, err := ParseTWCC(p)
		if err != nil {
			t.Fatal(err)
		}
		arrival := fb.Reference()
		st := fb.Statuses()
		for s, ok := st.Next(); ok; s, ok = st.Next() {
			if s.Received {
				arrival += s.Delta
				s.Delta = arrival // keep the absolute time to compare below
			}
			statuses = append(statuses, s)
		}
	}
	if len(statuses) != 300 {
		t.Fatalf("%d statuses, want 300", len(statuses))
	}
	var offset time.Duration
	for i, s := range statuses {
		if s.Seq != uint16(65400+i) {
			t.Fatalf("status %d has seq %d", i, s.Seq)
		}
		if s.Received == (i%10 == 3) {
			t.Fatalf("seq %d: received=%v", s.Seq, s.Received)
		}
		if !s.Received {
			continue
		}
		want := time.Duration(i)*5*time.Millisecond + time.Duration(i/4)*250*time.Microsecond + 40*time.Millisecond
		if i == 0 {
			offset = s.Delta - want
		}
		if s.Delta-want != offset {
			t.Fatalf("seq %d arrived at %v, want %v%+v", s.Seq, s.Delta, want, offset)
		}
	}
}

// TestSamplesCoverEveryChunkKind guards the cross-check's reach: between them the TWCC samples
// must use run lengths of every symbol, both status vector sizes, negative and large deltas and
// RTCP padding, or the agreement above proves less than it says.
func TestSamplesCoverEveryChunkKind(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range samples() {
		for _, p := range s.pkts {
			fb, ok := p.(*rtcp.TransportLayerCC)
			if !ok {
				continue
			}
			seen["padding"] = seen["padding"] || fb.Header.Padding
			for _, c := range fb.PacketChunks {
				switch c := c.(type) {
				case *rtcp.RunLengthChunk:
					seen[[]string{"run lost", "run small", "run large"}[c.PacketStatusSymbol]] = true
				case *rtcp.StatusVectorChunk:
					seen[[]string{"one-bit vector", "two-bit vector"}[c.SymbolSize]] = true
				}
			}
			for _, d := range fb.RecvDeltas {
				seen["negative delta"] = seen["negative delta"] || d.Delta < 0
				seen["large delta"] = seen["large delta"] || d.Type == rtcp.TypeTCCPacketReceivedLargeDelta
			}
		}
	}
	for _, k := range []string{"padding", "run lost", "run small", "run large", "one-bit vector", "two-bit vector", "negative delta", "large delta"} {
		if !seen[k] {
			t.Errorf("no sample has a %s", k)
		}
	}
}
