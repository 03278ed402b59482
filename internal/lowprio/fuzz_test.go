package lowprio

import (
	"bytes"
	"errors"
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

// FuzzSession feeds a sender with data in flight and a receiver a sequence of messages (each
// prefixed by its length byte): whatever arrives, nothing panics, a failed endpoint stays failed
// and emits exactly one RESET, and the receiver never holds more than its buffer.
func FuzzSession(f *testing.F) {
	s := NewSender(Config{}, nil)
	s.Write(make([]byte, 3000))
	var seed []byte
	s.Poll(0, func(b []byte) { seed = append(append(seed, byte(min(len(b), 255))), b[:min(len(b), 255)]...) })
	seed = append(append(seed, byte(len(ack(1, 1<<20)))), ack(1, 1<<20)...)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, in []byte) {
		s := NewSender(Config{SendBuffer: 4096}, nil)
		s.Write(make([]byte, 4096))
		r := NewReceiver(Config{RecvBuffer: 2048})
		resets := 0
		count := func(b []byte) {
			if len(b) > 0 && b[0]&0x0f == TypeReset {
				resets++
			}
		}
		now := time.Duration(0)
		s.Poll(now, count)
		for len(in) > 0 {
			n := min(int(in[0]), len(in)-1)
			msg := in[1 : 1+n]
			in = in[1+n:]
			now += time.Millisecond
			_ = s.OnMessage(now, msg)
			_ = r.OnMessage(now, msg)
			s.Poll(now, count)
			r.Poll(now, count)
			_, _ = r.Read(make([]byte, 100))
			if r.contig-r.read > uint64(len(r.buf)) || r.contig < r.read {
				t.Fatalf("receiver holds %d..%d with a %d-byte buffer", r.read, r.contig, len(r.buf))
			}
		}
		s.Poll(now+time.Hour, count)
		r.Poll(now+time.Hour, count)
		want := 0
		for _, err := range []error{s.Err(), r.Err()} {
			var re *ResetError
			if err != nil && !(errors.As(err, &re) && re.Code != CodeAbort) {
				want++ // a peer's RESET is not answered
			}
		}
		if resets != want {
			t.Fatalf("%d RESETs for errors %v, %v", resets, s.Err(), r.Err())
		}
	})
}
