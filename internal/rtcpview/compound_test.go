package rtcpview

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// frame builds one sub-packet by hand: header, body, then pad padding bytes (the last one counting
// them) when pad > 0. The body plus padding must be a whole number of 32-bit words.
func frame(t testing.TB, typ, count uint8, pad int, body ...byte) []byte {
	t.Helper()
	if (len(body)+pad)%4 != 0 {
		t.Fatalf("body of %d bytes + %d padding is not whole words", len(body), pad)
	}
	b := []byte{0x80 | count&0x1f, typ, 0, 0}
	if pad > 0 {
		b[0] |= 0x20
	}
	b = append(b, body...)
	if pad > 0 {
		b = append(b, make([]byte, pad)...)
		b[len(b)-1] = byte(pad)
	}
	binary.BigEndian.PutUint16(b[2:4], uint16(len(b)/4-1))
	return b
}

// only returns the single sub-packet of b, failing if there is not exactly one.
func only(t testing.TB, b []byte) Packet {
	t.Helper()
	it := Iterate(b)
	p, ok := it.Next()
	if !ok {
		t.Fatalf("no packet in % x: %v", b, it.Err())
	}
	if _, more := it.Next(); more || it.Err() != nil {
		t.Fatalf("more than one packet in % x (err %v)", b, it.Err())
	}
	return p
}

func TestIterateFramesSubPackets(t *testing.T) {
	pli := frame(t, TypePSFB, FormatPLI, 0, 0, 0, 0, 1, 0, 0, 0, 2)
	padded := frame(t, TypeRR, 0, 4, 0, 0, 0, 9)
	it := Iterate(append(append([]byte{}, pli...), padded...))
	p, ok := it.Next()
	if !ok || p.Kind() != KindPLI || p.Type != TypePSFB || p.Count != FormatPLI || p.Padding || len(p.Body) != 8 || !bytes.Equal(p.Raw, pli) {
		t.Fatalf("first packet %+v ok=%v", p, ok)
	}
	p, ok = it.Next()
	if !ok || p.Kind() != KindRR || !p.Padding || !bytes.Equal(p.Body, []byte{0, 0, 0, 9}) || len(p.Raw) != 12 {
		t.Fatalf("padded packet %+v ok=%v: the body must exclude the 4 padding bytes", p, ok)
	}
	if _, ok := it.Next(); ok || it.Err() != nil {
		t.Fatalf("iteration did not end cleanly: %v", it.Err())
	}
	// Padding may take the whole body: the count includes itself and may equal the body's size.
	p = only(t, []byte{0xa0, TypeBYE, 0, 1, 0, 0, 0, 4})
	if len(p.Body) != 0 || len(p.Raw) != 8 {
		t.Fatalf("all-padding packet %+v", p)
	}
}

func TestIterateStopsAtBadFraming(t *testing.T) {
	good := frame(t, TypeRR, 0, 0, 0, 0, 0, 1)
	tooLong := []byte{0x80, TypeRR, 0, 5, 0, 0, 0, 1} // says 24 bytes, has 8
	cases := []struct {
		name string
		b    []byte
		err  error
		good int // well-formed packets yielded before the error
	}{
		{"empty", nil, ErrShort, 0},
		{"version 1", []byte{0x40, TypeRR, 0, 0}, ErrVersion, 0},
		{"version 3 after a good one", append(append([]byte{}, good...), 0xc0, TypeRR, 0, 0), ErrVersion, 1},
		{"length beyond the buffer", append(append([]byte{}, good...), tooLong...), ErrShort, 1},
		{"trailing bytes", append(append([]byte{}, good...), 0x80, TypeRR), ErrShort, 1},
		{"padding count 0", []byte{0xa0, TypeRR, 0, 1, 0, 0, 0, 0}, ErrPadding, 0},
		{"padding beyond the body", []byte{0xa0, TypeRR, 0, 1, 0, 0, 0, 5}, ErrPadding, 0},
		{"padding on an empty body", []byte{0xa0, TypeRR, 0, 0}, ErrPadding, 0},
	}
	for _, c := range cases {
		it := Iterate(c.b)
		n := 0
		for _, ok := it.Next(); ok; _, ok = it.Next() {
			n++
		}
		if n != c.good || !errors.Is(it.Err(), c.err) {
			t.Errorf("%s: %d packets, err %v; want %d, %v", c.name, n, it.Err(), c.good, c.err)
		}
		if _, ok := it.Next(); ok {
			t.Errorf("%s: a packet after the error", c.name)
		}
	}
}

func TestKindNeedsTheREMBIdentifier(t *testing.T) {
	afb := frame(t, TypePSFB, FormatAFB, 0, 0, 0, 0, 1, 0, 0, 0, 0, 'X', 'Y', 'Z', 'W', 0, 0, 0, 0)
	p := only(t, afb)
	if p.Kind() != KindOther {
		t.Fatalf("application feedback without REMB is %v", p.Kind())
	}
	if _, err := ParseREMB(p); !errors.Is(err, ErrNotREMB) {
		t.Fatalf("ParseREMB: %v", err)
	}
	if _, err := ParsePLI(p); !errors.Is(err, ErrType) {
		t.Fatalf("ParsePLI on AFB: %v", err)
	}
}

func TestReportsRejectMoreBlocksThanFit(t *testing.T) {
	rr := only(t, frame(t, TypeRR, 2, 0, append([]byte{0, 0, 0, 1}, make([]byte, 24)...)...))
	if _, err := ParseReceiverReport(rr); !errors.Is(err, ErrShort) {
		t.Fatalf("RR with 2 blocks announced, 1 present: %v", err)
	}
	sr := only(t, frame(t, TypeSR, 0, 0, make([]byte, 20)...))
	if _, err := ParseSenderReport(sr); !errors.Is(err, ErrShort) {
		t.Fatalf("SR without the whole sender info: %v", err)
	}
	if _, err := ParseSenderReport(rr); !errors.Is(err, ErrType) {
		t.Fatalf("ParseSenderReport on an RR: %v", err)
	}
}

func TestReportBlocksAtAndFind(t *testing.T) {
	body := []byte{0, 0, 0, 1}
	for _, ssrc := range []byte{7, 8} {
		body = append(body, 0, 0, 0, ssrc, 64, 0xff, 0xff, 0xff, 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5)
	}
	rr, err := ParseReceiverReport(only(t, frame(t, TypeRR, 2, 0, body...)))
	if err != nil {
		t.Fatal(err)
	}
	b, ok := rr.Reports.Find(8)
	want := ReportBlock{SSRC: 8, FractionLost: 64, TotalLost: -1, HighestSeq: 0x10002, Jitter: 3, LastSR: 4, DelaySinceLSR: 5}
	if !ok || b != want {
		t.Fatalf("Find(8) = %+v %v, want %+v", b, ok, want)
	}
	if _, ok := rr.Reports.Find(9); ok {
		t.Fatal("found a block about an SSRC that has none")
	}
	if (rr.Reports.At(2) != ReportBlock{}) || (rr.Reports.At(-1) != ReportBlock{}) {
		t.Fatal("out-of-range blocks are not zero")
	}
}
