package wsapi

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janus"
)

// TestReaderWaitsForRoom: with replies owed and messages waiting at the limit the reader waits;
// the writer taking one message lets it go on.
func TestReaderWaitsForRoom(t *testing.T) {
	o := newOutbox(3)
	stop := make(chan struct{})
	for range 2 {
		if !o.acquire(stop) {
			t.Fatal("acquire with room failed")
		}
	}
	o.reply([]byte("r1")) // one reply waiting, one still owed
	o.event([]byte("e1")) // and an event: 3 pending
	got := make(chan bool)
	go func() { got <- o.acquire(stop) }()
	select {
	case <-got:
		t.Fatal("the reader went on with the outbox at its limit")
	case <-time.After(50 * time.Millisecond):
	}
	if b, ok := o.next(); !ok || string(b) != "r1" {
		t.Fatalf("first out: %q", b)
	}
	select {
	case <-got:
		t.Fatal("the reader went on before the message was written")
	case <-time.After(50 * time.Millisecond):
	}
	o.written()
	if !<-got {
		t.Fatal("acquire failed after room was made")
	}
	go func() { got <- o.acquire(stop) }()
	close(stop)
	if <-got {
		t.Fatal("acquire reported room after stop")
	}
}

// TestRepliesAreNeverRefused: however far over the limit events took the outbox, the reply a
// reader's slot was reserved for is queued, in order.
func TestRepliesAreNeverRefused(t *testing.T) {
	o := newOutbox(2)
	if !o.acquire(nil) {
		t.Fatal("acquire")
	}
	n := 0
	for o.event([]byte("e")) {
		n++
	}
	if n != eventHeadroom*2 {
		t.Fatalf("%d events accepted, want %d", n, eventHeadroom*2)
	}
	o.reply([]byte("r"))
	for i := range n {
		if b, _ := o.next(); string(b) != "e" {
			t.Fatalf("message %d: %q", i, b)
		}
		o.written()
	}
	if b, ok := o.next(); !ok || string(b) != "r" {
		t.Fatalf("the reply after the events: %q %v", b, ok)
	}
}

// TestDeliverToAnOverfullOutboxCutsOff: the event that finds the outbox overfull does not wait and
// is not dropped quietly: it asks the writer to close the connection.
func TestDeliverToAnOverfullOutboxCutsOff(t *testing.T) {
	c := &conn{out: newOutbox(1), cut: make(chan struct{})}
	for range eventHeadroom {
		c.Deliver(1, janus.Message{Janus: "event"})
	}
	select {
	case <-c.cut:
		t.Fatal("cut off within the bound")
	default:
	}
	c.Deliver(1, janus.Message{Janus: "event"})
	c.Deliver(1, janus.Message{Janus: "event"}) // a second refusal closes nothing twice
	select {
	case <-c.cut:
	default:
		t.Fatal("an event beyond the bound did not cut the client off")
	}
}
