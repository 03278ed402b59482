package rtcpview

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"testing"

	"github.com/pion/rtcp"
)

// The fuzzers check that no input panics, that every view's output is self-consistent, and that
// the views agree with pion/rtcp v1.2.17 wherever pion accepts a packet. They differ, on purpose,
// in these cases only (each recognised by a predicate below, so anything else fails the fuzzer):
//
//  1. Padding. pion never reads the padding count: it parses FCI entries, report blocks and TWCC
//     deltas out of the padding bytes, and accepts a count of 0 or one larger than the packet.
//     RFC 3550 §6.4.1 says padding is not payload and its last byte counts it; this package
//     strips it (rejecting impossible counts, as libwebrtc does). The fuzzer compares a padded
//     packet with pion's parse of the same body framed without padding instead.
//  2. TWCC symbol 3. draft-holmer-…-01 §3.1.1 reserves it; pion reads it as "received without
//     delta" and accepts the packet. This package rejects it (ErrReservedSymbol), as libwebrtc does.
//  3. TWCC chunks that end exactly at the end of the packet (every packet lost, so no deltas).
//     pion's bound check (`pos+2 >= totalLength`) is off by one and rejects the last chunk.
//  4. TWCC symbols beyond the status count in the last status vector. pion wants deltas for all
//     7 or 14 symbols and rejects the packet when they are missing; they are not packets, and
//     libwebrtc stops at the count, as this package does.
//  5. TWCC status counts within 14 of 65535: pion's uint16 count of processed statuses can wrap
//     past a status vector and it then reads chunks beyond the count and fails.
//  6. REMB with a media SSRC other than 0: pion rejects it; the draft says the field is 0, but
//     libwebrtc only logs, and the SSRCs that matter are in the FCI. This package accepts it.
//  7. REMB with mantissa 0: pion skips the float normalisation and reports 2^(exponent+23) bps;
//     the bitrate is 0.

// FuzzCompound feeds arbitrary bytes to the compound iterator and every view.
func FuzzCompound(f *testing.F) {
	for _, s := range samples() {
		f.Add(s.raw(f))
	}
	f.Add(twccRaw(f, false, 65534, 4, 0x800000, cat(oneBitChunk(1, 0, 1, 1), []byte{4, 8, 12})...))
	f.Add(twccRaw(f, true, 0, 1, 0, runChunk(1, 1)...))
	f.Add(twccRaw(f, false, 40, 3, 0, cat(twoBitChunk(1, 2, 1, 2, 2, 2, 2), []byte{4, 0xff, 0xfe, 8})...))
	f.Add([]byte{0xa0, TypeRR, 0, 1, 0, 0, 0, 5})
	f.Fuzz(checkCompound)
}

// FuzzBody frames arbitrary bodies correctly (type 200–207, any count, optional padding), so the
// fuzzer spends its time inside the views rather than on framing.
func FuzzBody(f *testing.F) {
	for _, s := range samples() {
		it := Iterate(s.raw(f))
		for p, ok := it.Next(); ok; p, ok = it.Next() {
			f.Add(p.Type, p.Count, p.Padding, p.Body)
		}
	}
	f.Fuzz(func(t *testing.T, typ, count uint8, padded bool, body []byte) {
		if len(body) > 4*0xfff0 {
			return
		}
		b := []byte{0x80 | count&0x1f, 200 + typ%8, 0, 0}
		b = append(b, body...)
		if padded {
			pad := 4 - len(body)%4
			b[0] |= 0x20
			b = append(b, make([]byte, pad)...)
			b[len(b)-1] = byte(pad)
		} else {
			for len(b)%4 != 0 {
				b = append(b, 0)
			}
		}
		binary.BigEndian.PutUint16(b[2:4], uint16(len(b)/4-1))
		checkCompound(t, b)
	})
}

func checkCompound(t *testing.T, b []byte) {
	it := Iterate(b)
	var ours []Packet
	end := 0
	for p, ok := it.Next(); ok; p, ok = it.Next() {
		if len(p.Raw) < HeaderSize || &p.Raw[0] != &b[end] || len(p.Body) > len(p.Raw)-HeaderSize {
			t.Fatalf("packet %d does not lie where the previous one ended: %+v", len(ours), p)
		}
		end += len(p.Raw)
		checkInvariants(t, p)
		checkAgainstPion(t, p)
		ours = append(ours, p)
	}
	if it.Err() == nil && end != len(b) {
		t.Fatalf("iteration ended at %d of %d without an error", end, len(b))
	}
	pkts, perr := rtcp.Unmarshal(b)
	switch {
	case perr == nil && it.Err() != nil:
		if !errors.Is(it.Err(), ErrPadding) { // difference 1
			t.Fatalf("pion frames %d packets, the iterator fails: %v", len(pkts), it.Err())
		}
	case perr == nil && len(pkts) != len(ours):
		t.Fatalf("pion frames %d packets, the iterator %d", len(pkts), len(ours))
	case perr != nil && it.Err() == nil:
		// pion fails the whole compound when one sub-packet fails its own parse.
		for _, p := range ours {
			if _, err := rtcp.Unmarshal(p.Raw); err != nil {
				return
			}
		}
		t.Fatalf("pion rejects the compound (%v), but every sub-packet on its own", perr)
	}
}

// checkInvariants walks every view of p and checks what must hold whatever pion says.
func checkInvariants(t *testing.T, p Packet) {
	switch p.Kind() {
	case KindTWCC:
		fb, err := ParseTWCC(p)
		if err != nil {
			return
		}
		// Each received packet takes 1 or 2 delta bytes, 2 when its delta cannot be a small one.
		n, received, minBytes := 0, 0, 0
		st := fb.Statuses()
		for s, ok := st.Next(); ok; s, ok = st.Next() {
			if s.Seq != fb.BaseSeq+uint16(n) {
				t.Fatalf("status %d has seq %d, base %d", n, s.Seq, fb.BaseSeq)
			}
			switch {
			case !s.Received && s.Delta != 0:
				t.Fatalf("lost packet with a delta: %+v", s)
			case s.Received && (s.Delta%TWCCDeltaUnit != 0 || s.Delta < -8192e6 || s.Delta > 8191.75e6):
				t.Fatalf("delta out of range: %+v", s)
			case s.Received && s.Delta >= 0 && s.Delta <= 63.75e6:
				received, minBytes = received+1, minBytes+1
			case s.Received:
				received, minBytes = received+1, minBytes+2
			}
			n++
		}
		if n != int(fb.StatusCount) {
			t.Fatalf("%d statuses, count %d", n, fb.StatusCount)
		}
		if len(fb.deltas) < minBytes || len(fb.deltas) > 2*received {
			t.Fatalf("%d delta bytes for %d received packets needing at least %d", len(fb.deltas), received, minBytes)
		}
	case KindNACK:
		nack, err := ParseNACK(p)
		if err != nil {
			return
		}
		want := 0
		for i := 0; i < nack.Pairs(); i++ {
			_, blp := nack.Pair(i)
			want += 1 + bits.OnesCount16(blp)
		}
		if got := len(nack.AppendLost(nil)); got != want {
			t.Fatalf("%d NACKed sequence numbers, pairs say %d", got, want)
		}
	default:
		visit(p, nil, nil)
	}
}

// checkAgainstPion compares p's view with pion's parse of the same bytes.
func checkAgainstPion(t *testing.T, p Packet) {
	if p.Kind() == KindOther {
		return
	}
	if p.Padding {
		if len(p.Body)%4 != 0 {
			return // difference 1, and no unpadded framing of this body exists
		}
		p = unpadded(p)
	}
	qs, perr := rtcp.Unmarshal(p.Raw)
	ourErr := parseError(p)
	switch {
	case perr == nil:
		if diff := agreeWithPion(p, qs[0]); diff != "" && !pionLenient(p, qs[0]) {
			t.Fatalf("%v % x: %s", p.Kind(), p.Raw, diff)
		}
	case ourErr == nil && !pionStrict(p):
		t.Fatalf("%v % x: pion rejects it (%v), the view accepts it", p.Kind(), p.Raw, perr)
	}
}

// unpadded frames p's body again without padding.
func unpadded(p Packet) Packet {
	raw := append([]byte{p.Raw[0] &^ 0x20, p.Type, 0, 0}, p.Body...)
	binary.BigEndian.PutUint16(raw[2:4], uint16(len(raw)/4-1))
	q, _, err := parsePacket(raw)
	if err != nil {
		panic(err)
	}
	return q
}

func parseError(p Packet) error {
	var err error
	switch p.Kind() {
	case KindSR:
		_, err = ParseSenderReport(p)
	case KindRR:
		_, err = ParseReceiverReport(p)
	case KindNACK:
		_, err = ParseNACK(p)
	case KindPLI:
		_, err = ParsePLI(p)
	case KindFIR:
		_, err = ParseFIR(p)
	case KindREMB:
		_, err = ParseREMB(p)
	case KindTWCC:
		_, err = ParseTWCC(p)
	}
	return err
}

// pionLenient recognises the documented cases where pion accepts what the view rejects or reads
// differently.
func pionLenient(p Packet, q rtcp.Packet) bool {
	switch q := q.(type) {
	case *rtcp.TransportLayerCC:
		_, reserved := pionStatuses(q) // difference 2
		return reserved
	case *rtcp.ReceiverEstimatedMaximumBitrate:
		r, err := ParseREMB(p)
		return err == nil && r.Mantissa == 0 // difference 7
	}
	return false
}

// pionStrict recognises the documented cases where pion rejects what the view accepts.
func pionStrict(p Packet) bool {
	switch p.Kind() {
	case KindREMB:
		r, _ := ParseREMB(p)
		return r.MediaSSRC != 0 // difference 6
	case KindTWCC:
		fb, _ := ParseTWCC(p)
		chunkEnd := HeaderSize + feedbackHeaderSize + twccFixedSize + len(fb.chunks)
		switch {
		case fb.StatusCount > 0 && chunkEnd == len(p.Raw): // difference 3
			return true
		case chunkEnd+len(fb.deltas)+extraPionDeltas(fb) > len(p.Raw): // difference 4
			return true
		case fb.StatusCount > 0xffff-14: // difference 5
			return true
		}
	}
	return false
}

// extraPionDeltas is the size of the deltas pion expects for the received symbols of the last
// status vector that lie beyond the status count.
func extraPionDeltas(fb TWCC) int {
	left, used := int(fb.StatusCount), 0
	var last uint16
	for i := 0; i+2 <= len(fb.chunks); i += 2 {
		last = be16(fb.chunks[i:])
		used = min(chunkLen(last), left)
		left -= used
	}
	if last&0x8000 == 0 {
		return 0
	}
	extra := 0
	for i := used; i < chunkLen(last); i++ {
		if s := chunkSymbol(last, i); s != symbolReserved {
			extra += int(s) // 1 byte for a small delta, 2 for a large one
		}
	}
	return extra
}
