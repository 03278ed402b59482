package plugin

import (
	"errors"
	"runtime"
	"sync"
	"testing"
)

// TestQueue: requests run one at a time in order; a full queue and a closed one say so; Close
// waits for the running request.
func TestQueue(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	q := NewQueue(2, func(m Message) {
		if m.Transaction == "first" {
			<-release
		}
		mu.Lock()
		got = append(got, m.Transaction)
		mu.Unlock()
	})
	for _, tx := range []string{"first", "second", "third"} {
		if err := q.Enqueue(Message{Transaction: tx}); err != nil {
			t.Fatalf("enqueue %s: %v", tx, err)
		}
		if tx == "first" {
			for len(q.msgs) > 0 { // the worker took it and waits in the handler
				runtime.Gosched()
			}
		}
	}
	if err := q.Enqueue(Message{Transaction: "fourth"}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("a fourth request with two waiting: %v, want ErrQueueFull", err)
	}
	close(release)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 3 {
			break
		}
		runtime.Gosched()
	}
	q.Close()
	q.Close()
	if got[0] != "first" || got[1] != "second" || got[2] != "third" {
		t.Fatalf("ran %v, want first, second, third", got)
	}
	if err := q.Enqueue(Message{}); !errors.Is(err, ErrDetached) {
		t.Fatalf("enqueue after Close: %v, want ErrDetached", err)
	}
	if q.Context().Err() == nil {
		t.Fatal("the context lives on after Close")
	}
}

// pushHandle records what reaches it.
type pushHandle struct {
	Handle
	pushed []string
}

func (h *pushHandle) PushEvent(tx string, _ any, _ *JSEP) error {
	h.pushed = append(h.pushed, tx)
	return nil
}

// TestPusher: events reach the handle until Detach, none after; Detach says whether it ran before.
func TestPusher(t *testing.T) {
	var p Pusher
	h := &pushHandle{}
	_ = p.Push(h, "a", nil, nil)
	if p.Detach() {
		t.Fatal("first Detach says it ran before")
	}
	_ = p.Push(h, "b", nil, nil)
	if !p.Detach() {
		t.Fatal("second Detach says it is the first")
	}
	if len(h.pushed) != 1 || h.pushed[0] != "a" {
		t.Fatalf("pushed %v, want [a]", h.pushed)
	}
}
