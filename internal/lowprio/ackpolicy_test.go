package lowprio

import (
	"testing"
	"time"
)

// The receiver ACKs at once on out-of-order data, otherwise every second message or after
// AckDelay; the ACK carries the SACK ranges, the timestamp echo and the window.
func TestAckPolicy(t *testing.T) {
	msgs := sent(t, NewSender(Config{}, nil), 2)
	t0 := 5 * time.Second
	cases := []struct {
		name     string
		deliver  []int
		pollAt   time.Duration
		wantAcks int
		wantCum  uint32
		wantSACK []Range
	}{
		{"one in order, before the delay", []int{0}, t0 + 9*time.Millisecond, 0, 0, nil},
		{"one in order, after the delay", []int{0}, t0 + 10*time.Millisecond, 1, 1, nil},
		{"two in order", []int{0, 1}, t0, 1, 2, nil},
		{"out of order", []int{1}, t0, 1, 0, []Range{{1, 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReceiver(Config{})
			for _, i := range c.deliver {
				if err := r.OnMessage(t0, msgs[i]); err != nil {
					t.Fatal(err)
				}
			}
			var acks []Message
			r.Poll(c.pollAt, func(b []byte) {
				var m Message
				if err := Decode(b, &m); err != nil || m.Type != TypeAck {
					t.Fatalf("emitted %x (%v)", b, err)
				}
				acks = append(acks, m)
			})
			if len(acks) != c.wantAcks {
				t.Fatalf("%d ACKs, want %d", len(acks), c.wantAcks)
			}
			if len(acks) == 0 {
				return
			}
			a := acks[0]
			if a.CumSeq != c.wantCum || len(a.SACK()) != len(c.wantSACK) || a.Limit != 256<<10 {
				t.Fatalf("ACK cum %d SACK %v limit %d", a.CumSeq, a.SACK(), a.Limit)
			}
			for i, w := range c.wantSACK {
				if a.SACK()[i] != w {
					t.Fatalf("SACK %v, want %v", a.SACK(), c.wantSACK)
				}
			}
			if a.RecvTS != ts(t0) || a.EchoTS != ts(time.Second) {
				t.Fatalf("echo %d recv %d", a.EchoTS, a.RecvTS)
			}
		})
	}
}

// Reading a quarter of the buffer sends a window update.
func TestWindowUpdate(t *testing.T) {
	cfg := Config{RecvBuffer: 4 * 1079}
	msgs := sent(t, NewSender(cfg, nil), 2)
	r := NewReceiver(cfg)
	for _, b := range msgs {
		if err := r.OnMessage(time.Second, b); err != nil {
			t.Fatal(err)
		}
	}
	r.Poll(time.Second, func([]byte) {})
	var m Message
	r.Read(make([]byte, 1079))
	r.Poll(time.Second, func(b []byte) { _ = Decode(b, &m) })
	if m.Type != TypeAck || m.Limit != 5*1079 {
		t.Fatalf("window update %+v", m)
	}
}
