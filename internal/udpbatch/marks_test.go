package udpbatch

import (
	"encoding/binary"
	"testing"
)

// FuzzMarksOf feeds arbitrary datagrams to the mark lookup: it must not panic, must find the mark
// of the RTP packet it was given, and must leave RTCP, STUN and DTLS unmarked.
func FuzzMarksOf(f *testing.F) {
	rtp := make([]byte, 12)
	rtp[0], rtp[1] = 0x80, 0xe0 // marker bit, payload type 96
	binary.BigEndian.PutUint16(rtp[2:], 7)
	binary.BigEndian.PutUint32(rtp[8:], 99)
	f.Add(rtp)
	f.Add([]byte{0x80, 200, 0, 6, 0, 0, 0, 99, 0, 0, 0, 99}) // RTCP sender report
	f.Add([]byte{0x00, 0x01, 0, 0, 0x21, 0x12, 0xa4, 0x42})  // STUN binding request
	f.Add([]byte{22, 0xfe, 0xfd, 0, 0})                      // DTLS handshake
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Marks
		var nilMarks *Marks
		if nilMarks.Of(b) != 0 {
			t.Fatal("nil table marked a datagram")
		}
		rtpLike := len(b) >= 12 && b[0]>>6 == 2 && (b[1] < 192 || b[1] > 223)
		if rtpLike {
			m.Mark(binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint16(b[2:]), 36)
		} else {
			m.Mark(0, 0, 36) // a mark elsewhere must not leak onto it
		}
		got := m.Of(b)
		if rtpLike && got != 36 || !rtpLike && got != 0 {
			t.Fatalf("Of(% x) = %d (RTP %v)", b, got, rtpLike)
		}
	})
}

// BenchmarkMarksOf is the cost the mark lookup adds to every datagram written.
func BenchmarkMarksOf(b *testing.B) {
	var m Marks
	pkt := make([]byte, 1200)
	pkt[0], pkt[1] = 0x80, 96
	b.ReportAllocs()
	for i := range b.N {
		binary.BigEndian.PutUint16(pkt[2:], uint16(i))
		m.Mark(0, uint16(i), 34) // the packet's SSRC is 0
		if m.Of(pkt) == 0 {
			b.Fatal("no mark")
		}
	}
}
