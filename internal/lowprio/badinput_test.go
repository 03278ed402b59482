package lowprio

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// sent runs a sender until it has emitted n DATA messages and returns them.
func sent(t *testing.T, s *Sender, n int) [][]byte {
	t.Helper()
	s.Write(stream(n*1079, 11))
	var msgs [][]byte
	s.Poll(time.Second, func(b []byte) { msgs = append(msgs, bytes.Clone(b)) })
	if len(msgs) < n {
		t.Fatalf("sender emitted %d messages, want %d", len(msgs), n)
	}
	return msgs[:n]
}

func ack(cum uint32, limit uint64, ranges ...Range) []byte {
	m := Message{CumSeq: cum, Limit: limit, NRanges: len(ranges)}
	copy(m.Ranges[:], ranges)
	b, _ := EncodeAck(make([]byte, 256), &m)
	return b
}

// lastReset decodes the RESET a Poll emits.
func lastReset(t *testing.T, poll func(time.Duration, func([]byte)) time.Duration) Message {
	t.Helper()
	var m Message
	n := 0
	poll(2*time.Second, func(b []byte) {
		if err := Decode(b, &m); err != nil || m.Type != TypeReset {
			t.Fatalf("emitted %x (%v), want a RESET", b, err)
		}
		n++
	})
	poll(3*time.Second, func([]byte) { n++ })
	if n != 1 {
		t.Fatalf("%d RESETs, want exactly one", n)
	}
	return m
}

func TestSenderBadAcks(t *testing.T) {
	cases := []struct {
		name string
		msg  []byte
		want error
	}{
		{"cumulative ack beyond what was sent", ack(3, 1<<20), ErrForgedAck},
		{"SACK range beyond what was sent", ack(0, 1<<20, Range{1, 5}), ErrForgedAck},
		{"unknown version", append([]byte{0x22}, ack(0, 1<<20)[1:]...), ErrVersion},
		{"truncated", ack(0, 1<<20)[:10], ErrShort},
		{"SACK ranges unsorted", ack(0, 1<<20, Range{2, 3}, Range{1, 2}), ErrRanges},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSender(Config{}, nil)
			sent(t, s, 2)
			if err := s.OnMessage(time.Second, c.msg); !errors.Is(err, c.want) {
				t.Fatalf("OnMessage: %v, want %v", err, c.want)
			}
			if !errors.Is(s.Err(), c.want) || s.Write([]byte("x")) != 0 {
				t.Fatalf("transfer not ended: %v", s.Err())
			}
			if m := lastReset(t, s.Poll); m.Code != CodeProtocol || !bytes.Contains(m.Reason, []byte(c.want.Error())) {
				t.Fatalf("RESET code %d reason %q", m.Code, m.Reason)
			}
		})
	}
}

// Duplicate ACKs count nothing twice; an ACK for another transfer is refused without harm.
func TestSenderDuplicateAcks(t *testing.T) {
	s := NewSender(Config{}, nil)
	msgs := sent(t, s, 2)
	for range 3 {
		if err := s.OnMessage(time.Second+40*time.Millisecond, ack(1, 1<<20)); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Acked != 1079 || st.InFlight != 1079 || st.Retransmits != 0 {
		t.Fatalf("after duplicate acks: %+v", st)
	}
	if err := s.OnMessage(time.Second, msgs[0]); !errors.Is(err, ErrUnexpected) || s.Err() != nil {
		t.Fatalf("DATA to the sender: %v, transfer error %v", err, s.Err())
	}
	other := ack(3, 1<<20)
	other[4] = 9 // transfer id 9
	if err := s.OnMessage(time.Second, other); !errors.Is(err, ErrWrongTransfer) || s.Err() != nil {
		t.Fatalf("other transfer's ACK: %v, transfer error %v", err, s.Err())
	}
}

func TestReceiverBadData(t *testing.T) {
	cfg := Config{RecvBuffer: 8 << 10}
	data := func(seq uint32, off uint64, n int) []byte {
		b, _ := EncodeData(make([]byte, 4096), 0, seq, 0, off, make([]byte, n))
		return b
	}
	fin := func(seq uint32, n uint64) []byte { b, _ := EncodeFin(make([]byte, 64), 0, seq, 0, n); return b }
	cases := []struct {
		name  string
		msgs  [][]byte
		want  error
		reset uint16
	}{
		{"offset beyond the window", [][]byte{data(0, 8<<10, 10)}, ErrImpossible, CodeProtocol},
		{"payload above MaxMessage", [][]byte{data(0, 0, 2000)}, ErrImpossible, CodeProtocol},
		{"offset near 2^64", [][]byte{data(0, 1<<63, 1)}, ErrOffset, CodeProtocol},
		{"data past the FIN", [][]byte{fin(1, 100), data(0, 90, 20)}, ErrImpossible, CodeProtocol},
		{"FIN below received data", [][]byte{data(0, 0, 100), fin(1, 50)}, ErrImpossible, CodeProtocol},
		{"unknown version", [][]byte{append([]byte{0x31}, data(0, 0, 1)[1:]...)}, ErrVersion, CodeProtocol},
		{"unknown type", [][]byte{append([]byte{0x17}, data(0, 0, 1)[1:]...)}, ErrType, CodeProtocol},
		{"peer reset", [][]byte{func() []byte { b, _ := EncodeReset(make([]byte, 64), 0, 7, "bye"); return b }()}, &ResetError{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReceiver(cfg)
			var err error
			for _, m := range c.msgs {
				err = r.OnMessage(time.Second, m)
			}
			var re *ResetError
			if !errors.Is(err, c.want) && !(errors.As(c.want, &re) && errors.As(err, &re)) {
				t.Fatalf("OnMessage: %v, want %v", err, c.want)
			}
			if _, rerr := r.Read(make([]byte, 10)); rerr == nil {
				t.Fatal("Read after a fatal message returned no error")
			}
			if c.reset == 0 {
				n := 0
				r.Poll(2*time.Second, func([]byte) { n++ })
				if n != 0 {
					t.Fatal("answered a RESET with a RESET")
				}
				return
			}
			if m := lastReset(t, r.Poll); m.Code != c.reset {
				t.Fatalf("RESET code %d, want %d", m.Code, c.reset)
			}
		})
	}
}

// Duplicate DATA is ignored but acknowledged at once (its ACK may have been lost).
func TestReceiverDuplicateData(t *testing.T) {
	msgs := sent(t, NewSender(Config{}, nil), 2)
	r := NewReceiver(Config{})
	for _, b := range [][]byte{msgs[0], msgs[1], msgs[0], msgs[1]} {
		if err := r.OnMessage(time.Second, b); err != nil {
			t.Fatal(err)
		}
	}
	acks := 0
	r.Poll(time.Second, func([]byte) { acks++ })
	got, err := io.ReadAll(readerFunc(r.Read))
	if err != nil || len(got) != 2*1079 || acks != 1 {
		t.Fatalf("read %d bytes (%v), %d acks", len(got), err, acks)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) {
	n, err := f(p)
	if n == 0 && err == nil {
		return 0, io.EOF // nothing more yet: stop ReadAll
	}
	return n, err
}

// An ACK echoing a timestamp the sender never sent gives no RTT sample: a forged echo cannot
// inflate the RTO and stall the transfer.
func TestSenderIgnoresForgedEcho(t *testing.T) {
	s := NewSender(Config{}, nil)
	sent(t, s, 2)
	a := ack(1, 1<<20)
	a[9], a[10], a[11], a[12] = 0x80, 0, 0, 0 // echo ≈ 35 min before now
	if err := s.OnMessage(time.Second+40*time.Millisecond, a); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Acked != 1079 || st.RTT != 0 || s.rtt.RTO() > time.Second {
		t.Fatalf("after a forged echo: %+v, RTO %v", st, s.rtt.RTO())
	}
}

// Abort's RESET carries the application's reason as it gave it, with the abort code, from
// either end.
func TestAbortResetCarriesReason(t *testing.T) {
	s := NewSender(Config{}, nil)
	s.Abort("user cancelled")
	r := NewReceiver(Config{})
	r.Abort("disk full")
	for _, c := range []struct {
		poll func(time.Duration, func([]byte)) time.Duration
		want string
	}{{s.Poll, "user cancelled"}, {r.Poll, "disk full"}} {
		m := lastReset(t, c.poll)
		if m.Code != CodeAbort || string(m.Reason) != c.want {
			t.Errorf("RESET code %d reason %q, want %d %q", m.Code, m.Reason, CodeAbort, c.want)
		}
	}
}
