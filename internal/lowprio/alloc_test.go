package lowprio

import (
	"testing"
	"time"
)

// loopback is a sender and a receiver wired back to back, one message per round.
type loopback struct {
	s         *Sender
	r         *Receiver
	now       time.Duration
	chunk     []byte
	buf       []byte
	toR, toS  func([]byte)
	receiving error
}

func newLoopback() *loopback {
	l := &loopback{s: NewSender(Config{}, nil), r: NewReceiver(Config{}), now: time.Second,
		chunk: make([]byte, 1100-DataHeader), buf: make([]byte, 2048)}
	l.toR = func(b []byte) { keep(&l.receiving, l.r.OnMessage(l.now, b)) }
	l.toS = func(b []byte) { keep(&l.receiving, l.s.OnMessage(l.now, b)) }
	return l
}

// round writes one message's worth, carries it over and acknowledges it.
func (l *loopback) round() {
	l.now += time.Millisecond
	l.s.Write(l.chunk)
	l.s.Poll(l.now, l.toR)
	l.r.Poll(l.now, l.toS)
	for {
		if n, _ := l.r.Read(l.buf); n == 0 {
			return
		}
	}
}

// The steady state allocates nothing: encoding, decoding, reassembly, ACKs and the controller.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	l := newLoopback()
	for range 2000 {
		l.round()
	}
	if a := testing.AllocsPerRun(1000, l.round); a != 0 {
		t.Fatalf("%.1f allocations per message", a)
	}
	if l.receiving != nil || l.s.Stats().Acked < 2000*1079 {
		t.Fatalf("loopback broken: %v, acked %d", l.receiving, l.s.Stats().Acked)
	}
}

func BenchmarkRound(b *testing.B) {
	l := newLoopback()
	b.ReportAllocs()
	b.SetBytes(int64(len(l.chunk)))
	for b.Loop() {
		l.round()
	}
}

func BenchmarkEncodeData(b *testing.B) {
	buf, p := make([]byte, 1100), make([]byte, 1079)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = EncodeData(buf, 1, 2, 3, 4, p)
	}
}

func BenchmarkDecodeData(b *testing.B) {
	msg, _ := EncodeData(make([]byte, 1100), 1, 2, 3, 4, make([]byte, 1079))
	var m Message
	b.ReportAllocs()
	for b.Loop() {
		_ = Decode(msg, &m)
	}
}

func BenchmarkDecodeAck(b *testing.B) {
	a := Message{NRanges: 4, Ranges: [MaxSACKRanges]Range{{3, 4}, {6, 9}, {11, 12}, {20, 30}}}
	msg, _ := EncodeAck(make([]byte, 256), &a)
	var m Message
	b.ReportAllocs()
	for b.Loop() {
		_ = Decode(msg, &m)
	}
}
