package rtcpview

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/pion/rtcp"
)

func TestNACKLostWrapsAndKeepsOrder(t *testing.T) {
	body := []byte{0, 0, 0, 1, 0, 0, 0, 2,
		0xff, 0xfe, 0x80, 0x03, // PID 65534, BLP bits 0, 1, 15: 65535, 0, 14
		0x00, 0x10, 0x00, 0x00, // PID 16 alone
	}
	n, err := ParseNACK(only(t, frame(t, TypeRTPFB, FormatNACK, 0, body...)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n.AppendLost(nil), []uint16{65534, 65535, 0, 14, 16}; !slices.Equal(got, want) {
		t.Fatalf("lost %v, want %v", got, want)
	}
	if pid, blp := n.Pair(0); n.Pairs() != 2 || pid != 65534 || blp != 0x8003 {
		t.Fatalf("pairs %d, first %d/%x", n.Pairs(), pid, blp)
	}
}

func TestNACKNeedsOnePair(t *testing.T) {
	p := only(t, frame(t, TypeRTPFB, FormatNACK, 0, 0, 0, 0, 1, 0, 0, 0, 2))
	if _, err := ParseNACK(p); !errors.Is(err, ErrLength) {
		t.Fatalf("NACK without FCI: %v", err)
	}
	// Padding is not part of the FCI: 4 padding bytes leave no pair either.
	p = only(t, frame(t, TypeRTPFB, FormatNACK, 4, 0, 0, 0, 1, 0, 0, 0, 2))
	if _, err := ParseNACK(p); !errors.Is(err, ErrLength) {
		t.Fatalf("NACK with padding only: %v", err)
	}
}

func TestFIRNeedsWholeEntries(t *testing.T) {
	header := []byte{0, 0, 0, 1, 0, 0, 0, 0}
	for _, fci := range [][]byte{nil, {0, 0, 0, 7}, {0, 0, 0, 7, 1, 0, 0, 0, 0, 0, 0, 8}} {
		p := only(t, frame(t, TypePSFB, FormatFIR, 0, append(header, fci...)...))
		if _, err := ParseFIR(p); !errors.Is(err, ErrLength) {
			t.Errorf("FIR with %d FCI bytes: %v", len(fci), err)
		}
	}
}

func remb(t *testing.T, exp uint8, mantissa uint32, ssrcs ...byte) REMB {
	t.Helper()
	body := []byte{0, 0, 0, 1, 0, 0, 0, 0, 'R', 'E', 'M', 'B', byte(len(ssrcs) / 4),
		exp<<2 | byte(mantissa>>16), byte(mantissa >> 8), byte(mantissa)}
	r, err := ParseREMB(only(t, frame(t, TypePSFB, FormatAFB, 0, append(body, ssrcs...)...)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestREMBBitrateSaturates(t *testing.T) {
	cases := []struct {
		exp      uint8
		mantissa uint32
		want     uint64
	}{
		{0, 0, 0},
		{63, 0, 0},
		{0, 0x3ffff, 0x3ffff},
		{10, 1000, 1000 << 10},
		{46, 0x3ffff, 0x3ffff << 46},  // the largest that fits: just under 2^64
		{47, 0x20000, math.MaxUint64}, // exactly 2^64
		{63, 0x3ffff, math.MaxUint64}, // 2^81
		{63, 1, 1 << 63},              // fits
	}
	for _, c := range cases {
		if got := remb(t, c.exp, c.mantissa).Bitrate(); got != c.want {
			t.Errorf("%d×2^%d = %d, want %d", c.mantissa, c.exp, got, c.want)
		}
	}
	r := remb(t, 1, 1, 0, 0, 0, 5, 0, 0, 0, 6)
	if r.Len() != 2 || r.SSRC(0) != 5 || r.SSRC(1) != 6 || r.SSRC(2) != 0 {
		t.Fatalf("SSRCs %d: %d %d", r.Len(), r.SSRC(0), r.SSRC(1))
	}
}

func TestREMBSSRCCountMustMatch(t *testing.T) {
	body := []byte{0, 0, 0, 1, 0, 0, 0, 0, 'R', 'E', 'M', 'B', 2, 0, 0, 1, 0, 0, 0, 5}
	if _, err := ParseREMB(only(t, frame(t, TypePSFB, FormatAFB, 0, body...))); !errors.Is(err, ErrLength) {
		t.Fatalf("REMB announcing 2 SSRCs with 1: %v", err)
	}
}

func TestNACKCountMatchesTheLostList(t *testing.T) {
	for _, pairs := range [][]rtcp.NackPair{
		{{PacketID: 10, LostPackets: 0}},
		{{PacketID: 10, LostPackets: 0b101}, {PacketID: 65530, LostPackets: 0xffff}},
	} {
		raw, err := (&rtcp.TransportLayerNack{SenderSSRC: 1, MediaSSRC: 2, Nacks: pairs}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		it := Iterate(raw)
		p, _ := it.Next()
		n, err := ParseNACK(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := n.Count(), len(n.AppendLost(nil)); got != want {
			t.Errorf("Count() = %d, the lost list has %d", got, want)
		}
	}
}
