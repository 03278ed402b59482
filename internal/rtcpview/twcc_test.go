package rtcpview

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pion/rtcp"
)

// twccRaw builds a TWCC feedback by hand: sender 0x11, media 0x22, feedback count 9, then the
// chunks and deltas in rest, filled to a whole word with zeros, or with RTCP padding when padded.
func twccRaw(t testing.TB, padded bool, base, count uint16, ref uint32, rest ...byte) []byte {
	t.Helper()
	body := []byte{0, 0, 0, 0x11, 0, 0, 0, 0x22, byte(base >> 8), byte(base), byte(count >> 8), byte(count),
		byte(ref >> 16), byte(ref >> 8), byte(ref), 9}
	body = append(body, rest...)
	pad := 0
	if padded {
		pad = 4 - len(body)%4
	} else {
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
	}
	return frame(t, TypeRTPFB, FormatTWCC, pad, body...)
}

func runChunk(symbol, n uint16) []byte { return be16Bytes(symbol<<13 | n&0x1fff) }

func oneBitChunk(bits ...uint16) []byte {
	c := uint16(0x8000)
	for i, b := range bits {
		c |= b << (13 - i)
	}
	return be16Bytes(c)
}

func twoBitChunk(symbols ...uint16) []byte {
	c := uint16(0xc000)
	for i, s := range symbols {
		c |= s << (12 - 2*i)
	}
	return be16Bytes(c)
}

func be16Bytes(v uint16) []byte { return []byte{byte(v >> 8), byte(v)} }

func cat(parts ...[]byte) []byte { return slices.Concat(parts...) }

func parseTWCC(t *testing.T, raw []byte) (TWCC, error) {
	t.Helper()
	return ParseTWCC(only(t, raw))
}

func pionAccepts(raw []byte) bool { return new(rtcp.TransportLayerCC).Unmarshal(raw) == nil }

// The last status vector's symbols beyond the status count are not packets: they need no deltas.
// pion expects deltas for all of them and rejects this packet; libwebrtc, which stops at the count,
// accepts it.
func TestTWCCCountEndsMidVector(t *testing.T) {
	raw := twccRaw(t, false, 40, 3, 0, cat(twoBitChunk(1, 2, 1, 2, 2, 2, 2), []byte{4, 0xff, 0xfe, 8})...)
	fb, err := parseTWCC(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []Status{{40, true, time.Millisecond}, {41, true, -500 * time.Microsecond}, {42, true, 2 * time.Millisecond}}
	if got := fb.AppendStatuses(nil); !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if pionAccepts(raw) {
		t.Fatal("pion accepts it now: update the differences listed in fuzz_test.go")
	}
}

func TestTWCCMissingDeltasAreAnError(t *testing.T) {
	cases := map[string][]byte{
		"two of three small deltas": twccRaw(t, false, 0, 3, 0, cat(runChunk(1, 3), []byte{1, 2})...),
		"half a large delta":        twccRaw(t, false, 0, 2, 0, cat(twoBitChunk(1, 2), []byte{1, 2})...),
		"one-bit vector, no deltas": twccRaw(t, false, 0, 14, 0, oneBitChunk(0, 1, 1, 1)...),
		// The delta would sit in the padding (as 0), where pion reads it; padding is not payload.
		"delta in the padding": twccRaw(t, true, 0, 1, 0, runChunk(1, 1)...),
	}
	for name, raw := range cases {
		if _, err := parseTWCC(t, raw); !errors.Is(err, ErrMissingDeltas) {
			t.Errorf("%s: %v, want ErrMissingDeltas", name, err)
		}
	}
}

func TestTWCCMissingChunksAreAnError(t *testing.T) {
	raw := twccRaw(t, false, 0, 20, 0, cat(runChunk(0, 10), runChunk(0, 0))...)
	if _, err := parseTWCC(t, raw); !errors.Is(err, ErrShort) {
		t.Fatalf("10 of 20 statuses: %v", err)
	}
}

// Symbol 3 is reserved (draft-01 §3.1.1); libwebrtc rejects a feedback using it, pion takes it for
// "received without delta". Beyond the status count it is only filler.
func TestTWCCReservedSymbol(t *testing.T) {
	for name, raw := range map[string][]byte{
		"run length": twccRaw(t, false, 0, 5, 0, runChunk(3, 5)...),
		"two-bit":    twccRaw(t, false, 0, 7, 0, twoBitChunk(1, 3, 0, 0, 0, 0, 0)...),
	} {
		if _, err := parseTWCC(t, raw); !errors.Is(err, ErrReservedSymbol) {
			t.Errorf("%s: %v, want ErrReservedSymbol", name, err)
		}
	}
	raw := twccRaw(t, false, 0, 6, 0, cat(twoBitChunk(1, 0, 0, 0, 0, 0, 3), []byte{9})...)
	fb, err := parseTWCC(t, raw)
	if err != nil || len(fb.AppendStatuses(nil)) != 6 {
		t.Fatalf("reserved symbol beyond the count: %v", err)
	}
}

func TestTWCCSequenceWrapAndSignedReference(t *testing.T) {
	raw := twccRaw(t, false, 65534, 4, 0x800000, cat(oneBitChunk(1, 0, 1, 1), []byte{4, 8, 12})...)
	fb, err := parseTWCC(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	if fb.ReferenceTime != -1<<23 || fb.Reference() != -(1<<23)*64*time.Millisecond {
		t.Fatalf("reference %d (%v)", fb.ReferenceTime, fb.Reference())
	}
	want := []Status{{65534, true, time.Millisecond}, {65535, false, 0}, {0, true, 2 * time.Millisecond}, {1, true, 3 * time.Millisecond}}
	if got := fb.AppendStatuses(make([]Status, 0, 8)); !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if fb.SenderSSRC != 0x11 || fb.MediaSSRC != 0x22 || fb.FbPktCount != 9 || fb.StatusCount != 4 {
		t.Fatalf("header %+v", fb)
	}
	raw = twccRaw(t, false, 0, 0, 0x7fffff)
	if fb, err := parseTWCC(t, raw); err != nil || fb.ReferenceTime != 1<<23-1 {
		t.Fatalf("largest reference time: %d %v", fb.ReferenceTime, err)
	}
}

// Chunks that end exactly where the packet ends (all packets lost, so no deltas) are complete;
// pion's bound check is off by one there and rejects the packet.
func TestTWCCChunksEndingAtThePacketEnd(t *testing.T) {
	raw := twccRaw(t, false, 7, 28, 0, cat(oneBitChunk(), oneBitChunk())...)
	fb, err := parseTWCC(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	st := fb.Statuses()
	for s, ok := st.Next(); ok; s, ok = st.Next() {
		if s.Received || s.Seq != uint16(7+n) {
			t.Fatalf("status %d: %+v", n, s)
		}
		n++
	}
	if n != 28 {
		t.Fatalf("%d statuses, want 28", n)
	}
	if pionAccepts(raw) {
		t.Fatal("pion accepts it now: update the differences listed in fuzz_test.go")
	}
}

func TestTWCCEmptyRunsAreSkipped(t *testing.T) {
	raw := twccRaw(t, false, 9, 3, 0, cat(runChunk(1, 0), runChunk(0, 2), runChunk(2, 0), runChunk(2, 1), []byte{0x80, 0})...)
	fb, err := parseTWCC(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []Status{{9, false, 0}, {10, false, 0}, {11, true, -8192 * time.Millisecond}}
	if got := fb.AppendStatuses(nil); !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	var zero StatusIterator
	if _, ok := zero.Next(); ok {
		t.Fatal("a zero iterator yields a status")
	}
}

// TestViewsDoNotAllocate runs every view over every sample, iterating everything they hold.
func TestViewsDoNotAllocate(t *testing.T) {
	var raws [][]byte
	for _, s := range samples() {
		raws = append(raws, s.raw(t))
	}
	statuses := make([]Status, 0, 1024)
	lost := make([]uint16, 0, 256)
	allocs := testing.AllocsPerRun(50, func() {
		for _, raw := range raws {
			it := Iterate(raw)
			for p, ok := it.Next(); ok; p, ok = it.Next() {
				statuses, lost = visit(p, statuses[:0], lost[:0])
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
	if cap(statuses) != 1024 {
		t.Fatal("statuses outgrew the preallocated slice")
	}
}

// visit parses p with the view of its kind and walks everything in it, as a consumer would.
func visit(p Packet, statuses []Status, lost []uint16) ([]Status, []uint16) {
	switch p.Kind() {
	case KindSR:
		if sr, err := ParseSenderReport(p); err == nil {
			walkBlocks(sr.Reports)
		}
	case KindRR:
		if rr, err := ParseReceiverReport(p); err == nil {
			walkBlocks(rr.Reports)
		}
	case KindNACK:
		if n, err := ParseNACK(p); err == nil {
			lost = n.AppendLost(lost)
		}
	case KindPLI:
		_, _ = ParsePLI(p)
	case KindFIR:
		if f, err := ParseFIR(p); err == nil {
			for i := 0; i < f.Len(); i++ {
				_ = f.Entry(i)
			}
		}
	case KindREMB:
		if r, err := ParseREMB(p); err == nil {
			_ = r.Bitrate()
			for i := 0; i < r.Len(); i++ {
				_ = r.SSRC(i)
			}
		}
	case KindTWCC:
		if fb, err := ParseTWCC(p); err == nil {
			statuses = fb.AppendStatuses(statuses)
		}
	}
	return statuses, lost
}

func walkBlocks(r ReportBlocks) {
	for i := 0; i < r.Len(); i++ {
		_ = r.At(i)
	}
}
