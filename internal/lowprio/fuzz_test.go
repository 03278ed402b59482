package lowprio

import (
	"bytes"
	"testing"
	"time"
)

// FuzzDecode checks that Decode never panics, that what it accepts re-encodes to the same bytes,
// and that a sender and a receiver fed the message fail cleanly or not at all.
func FuzzDecode(f *testing.F) {
	d, _ := EncodeData(make([]byte, 64), 1, 2, 3, 4, []byte("hello"))
	a := Message{Transfer: 1, CumSeq: 2, EchoTS: 3, RecvTS: 4, Limit: 5, NRanges: 2, Ranges: [MaxSACKRanges]Range{{3, 4}, {6, 9}}}
	ab, _ := EncodeAck(make([]byte, 64), &a)
	fb, _ := EncodeFin(make([]byte, 64), 1, 2, 3, 4)
	rb, _ := EncodeReset(make([]byte, 64), 1, 2, "reason")
	for _, b := range [][]byte{d, ab, fb, rb, {}, {0x11}} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if err := Decode(b, &m); err == nil {
			if re := reencode(&m); !bytes.Equal(re, b) {
				t.Fatalf("re-encoded %x, decoded from %x", re, b)
			}
		}
		s := NewSender(Config{Transfer: m.Transfer, SendBuffer: 4096}, nil)
		s.Write(make([]byte, 3000))
		s.Poll(0, func([]byte) {})
		_ = s.OnMessage(time.Millisecond, b)
		s.Poll(2*time.Millisecond, func([]byte) {})
		r := NewReceiver(Config{Transfer: m.Transfer, RecvBuffer: 4096})
		_ = r.OnMessage(time.Millisecond, b)
		r.Poll(2*time.Millisecond, func([]byte) {})
		_, _ = r.Read(make([]byte, 100))
	})
}

func reencode(m *Message) []byte {
	buf := make([]byte, 70000)
	var b []byte
	switch m.Type {
	case TypeData:
		b, _ = EncodeData(buf, m.Transfer, m.Seq, m.SendTS, m.Offset, m.Payload)
	case TypeAck:
		b, _ = EncodeAck(buf, m)
	case TypeFin:
		b, _ = EncodeFin(buf, m.Transfer, m.Seq, m.SendTS, m.Offset)
	case TypeReset:
		b, _ = EncodeReset(buf, m.Transfer, m.Code, string(m.Reason))
	}
	return b
}
