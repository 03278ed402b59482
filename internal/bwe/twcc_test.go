package bwe

import (
	"testing"
	"time"

	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/cc"
)

// roundTrip records arrivals with Pion's own TWCC feedback generator (the one strata's receive
// side uses), marshals and parses the feedback as it would cross the wire, and decodes it.
func roundTrip(t *testing.T, h *sendHistory, u *seqUnwrapper, rec *twcc.Recorder) []cc.PacketResult {
	t.Helper()
	var out []cc.PacketResult
	for _, p := range rec.BuildFeedbackPacket() {
		raw, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := rtcp.Unmarshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range parsed {
			if fb, ok := q.(*rtcp.TransportLayerCC); ok {
				out = decodeTWCC(out, fb, u, h)
			}
		}
	}
	return out
}

func TestDecodeTWCCMatchesRecordedArrivals(t *testing.T) {
	h := newSendHistory()
	var sent seqUnwrapper
	rec := twcc.NewRecorder(1)
	arrivals := map[int64]time.Duration{}
	const n = 300
	for i := 0; i < n; i++ {
		seq := uint16(65400 + i) // crosses the 16-bit wrap
		full := sent.unwrap(seq)
		h.add(full, time.Duration(i)*5*time.Millisecond, 1000+i, 0)
		if i%10 == 3 {
			continue // lost
		}
		// Arrivals: 5 ms apart plus a slowly growing queue, at 1 µs resolution... TWCC carries
		// 250 µs units, so use multiples of 250 µs.
		at := time.Duration(i)*5*time.Millisecond + time.Duration(i/4)*250*time.Microsecond + 40*time.Millisecond
		arrivals[full] = at
		rec.Record(7, seq, at.Microseconds())
	}
	var u seqUnwrapper
	got := roundTrip(t, h, &u, rec)
	if len(got) != n {
		t.Fatalf("decoded %d packets, want %d", len(got), n)
	}
	var first time.Duration
	for i, r := range got {
		want, received := arrivals[r.SeqNo]
		if r.Lost == received {
			t.Fatalf("packet %d: lost=%v, want %v", r.SeqNo, r.Lost, !received)
		}
		if r.Size != 1000+i || r.SendTime != time.Duration(i)*5*time.Millisecond {
			t.Fatalf("packet %d joined with the wrong send record: %+v", r.SeqNo, r)
		}
		if received {
			if first == 0 {
				first = r.Arrival - want
			}
			// The receiver's clock origin is arbitrary; inter-arrival times must be exact.
			if r.Arrival-want != first {
				t.Fatalf("packet %d: arrival %v, want %v (+%v)", r.SeqNo, r.Arrival, want, first)
			}
		}
	}
}

func TestDecodeTWCCSkipsPacketsTheHistoryForgot(t *testing.T) {
	h := newSendHistory()
	rec := twcc.NewRecorder(1)
	for i := 0; i < 10; i++ {
		if i >= 5 {
			h.add(int64(i), time.Duration(i)*time.Millisecond, 100, 0)
		}
		rec.Record(7, uint16(i), int64(i)*1000)
	}
	var u seqUnwrapper
	got := roundTrip(t, h, &u, rec)
	if len(got) != 5 || got[0].SeqNo != 5 {
		t.Fatalf("got %d results starting at %v, want 5 starting at 5", len(got), got)
	}
}

func TestDecodeTWCCMalformedCountsDoNotPanic(t *testing.T) {
	h := newSendHistory()
	h.add(0, 0, 100, 0)
	fb := &rtcp.TransportLayerCC{
		BaseSequenceNumber: 0,
		PacketStatusCount:  50, // claims 50 received packets but carries one delta
		PacketChunks:       []rtcp.PacketStatusChunk{&rtcp.RunLengthChunk{PacketStatusSymbol: rtcp.TypeTCCPacketReceivedSmallDelta, RunLength: 50}},
		RecvDeltas:         []*rtcp.RecvDelta{{Type: rtcp.TypeTCCPacketReceivedSmallDelta, Delta: 250}},
	}
	var u seqUnwrapper
	got := decodeTWCC(nil, fb, &u, h)
	if len(got) != 1 {
		t.Fatalf("got %d results, want the one packet that had a delta", len(got))
	}
}

func FuzzDecodeTWCC(f *testing.F) {
	rec := twcc.NewRecorder(1)
	for i := 0; i < 40; i++ {
		if i%7 != 0 {
			rec.Record(1, uint16(i), int64(i)*3000)
		}
	}
	for _, p := range rec.BuildFeedbackPacket() {
		raw, _ := p.Marshal()
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		pkts, err := rtcp.Unmarshal(raw)
		if err != nil {
			return
		}
		h := newSendHistory()
		for i := int64(0); i < 1<<16; i += 97 {
			h.add(i, time.Duration(i), 1, 0)
		}
		var u seqUnwrapper
		for _, p := range pkts {
			if fb, ok := p.(*rtcp.TransportLayerCC); ok {
				for _, r := range decodeTWCC(nil, fb, &u, h) {
					if r.Size != 1 {
						t.Fatalf("result not joined with the history: %+v", r)
					}
				}
			}
		}
	})
}

func BenchmarkDecodeTWCC(b *testing.B) {
	h := newSendHistory()
	rec := twcc.NewRecorder(1)
	for i := 0; i < 100; i++ {
		h.add(int64(i), time.Duration(i)*time.Millisecond, 1200, 0)
		rec.Record(1, uint16(i), int64(i)*1000)
	}
	var fb *rtcp.TransportLayerCC
	for _, p := range rec.BuildFeedbackPacket() {
		fb = p.(*rtcp.TransportLayerCC)
	}
	out := make([]cc.PacketResult, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		u := seqUnwrapper{}
		out = decodeTWCC(out[:0], fb, &u, h)
	}
}
