package bwe

import (
	"testing"
	"time"

	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/gcc"
	"github.com/strata-rtc/strata/internal/rtcpview"
)

// twccViews marshals Pion-built feedback as it would cross the wire and returns the raw views of
// its transport-wide CC packets.
func twccViews(t testing.TB, pkts []rtcp.Packet) []rtcpview.TWCC {
	t.Helper()
	var out []rtcpview.TWCC
	for _, p := range pkts {
		raw, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		it := rtcpview.Iterate(raw)
		for q, ok := it.Next(); ok; q, ok = it.Next() {
			if q.Kind() != rtcpview.KindTWCC {
				continue
			}
			fb, err := rtcpview.ParseTWCC(q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fb)
		}
	}
	return out
}

// roundTrip records arrivals with Pion's own TWCC feedback generator (the one strata's receive
// side uses), marshals the feedback, and decodes it.
func roundTrip(t *testing.T, h *sendHistory, u *cc.SeqUnwrapper, rec *twcc.Recorder) []cc.PacketResult {
	t.Helper()
	var out []cc.PacketResult
	for _, fb := range twccViews(t, rec.BuildFeedbackPacket()) {
		out = decodeTWCC(out, &fb, u, h)
	}
	return out
}

func TestDecodeTWCCMatchesRecordedArrivals(t *testing.T) {
	h := newSendHistory()
	var sent cc.SeqUnwrapper
	rec := twcc.NewRecorder(1)
	arrivals := map[int64]time.Duration{}
	const n = 300
	for i := 0; i < n; i++ {
		seq := uint16(65400 + i) // crosses the 16-bit wrap
		full := sent.Unwrap(seq)
		h.add(full, time.Duration(i)*3*time.Millisecond, 1000+i, 0) // 0.9 s: within the history's horizon
		if i%10 == 3 {
			continue // lost
		}
		// Arrivals: 3 ms apart plus a slowly growing queue, at 1 µs resolution... TWCC carries
		// 250 µs units, so use multiples of 250 µs.
		at := time.Duration(i)*3*time.Millisecond + time.Duration(i/4)*250*time.Microsecond + 40*time.Millisecond
		arrivals[full] = at
		rec.Record(7, seq, at.Microseconds())
	}
	var u cc.SeqUnwrapper
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
		if r.Size != 1000+i || r.SendTime != time.Duration(i)*3*time.Millisecond {
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
	var u cc.SeqUnwrapper
	got := roundTrip(t, h, &u, rec)
	if len(got) != 5 || got[0].SeqNo != 5 {
		t.Fatalf("got %d results starting at %v, want 5 starting at 5", len(got), got)
	}
}

// Feedback announcing more receptions than it carries deltas for is dropped whole, and the
// estimator sees nothing of it.
func TestMalformedFeedbackIsIgnored(t *testing.T) {
	s := NewSendSide(gcc.NewSender(), 0)
	defer s.Close()
	// TWCC header, base seq 0, status count 50, reference time, fb count; one run-length chunk of
	// 50 "received, small delta"; one delta byte only.
	raw := []byte{0x8f, 205, 0, 5, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 50, 0, 0, 1, 0, 0x20, 50, 1, 0}
	before := s.est.feedback
	s.readRTCP(raw)
	if s.est.feedback != before {
		t.Fatal("malformed feedback reached the estimator")
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
		h := newSendHistory()
		for i := int64(0); i < historySize; i += 97 {
			h.add(i, time.Duration(i), 1, 0)
		}
		var u cc.SeqUnwrapper
		it := rtcpview.Iterate(raw)
		for p, ok := it.Next(); ok; p, ok = it.Next() {
			fb, err := rtcpview.ParseTWCC(p)
			if err != nil {
				continue
			}
			for _, r := range decodeTWCC(nil, &fb, &u, h) {
				if r.Size != 1 {
					t.Fatalf("result not joined with the history: %+v", r)
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
	views := twccViews(b, rec.BuildFeedbackPacket())
	fb := &views[len(views)-1]
	out := make([]cc.PacketResult, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		u := cc.SeqUnwrapper{}
		out = decodeTWCC(out[:0], fb, &u, h)
	}
}
