package topo

import (
	"testing"
	"time"
)

// TestHopQueue: the next hop finds each packet's queueing so far by its hash,
// in order; packets lost between the hops are skipped; identical packets
// (the same hash) are matched first in, first out; an unknown one is not
// matched and consumes nothing.
func TestHopQueue(t *testing.T) {
	var q hopQueue
	for i, h := range []uint64{1, 2, 3, 2, 4} {
		q.put(h, time.Duration(i+1))
	}
	for _, c := range []struct {
		hash  uint64
		want  time.Duration
		found bool
	}{{1, 1, true}, {9, 0, false}, {3, 3, true}, {2, 4, true}, {4, 5, true}, {4, 0, false}} {
		got, found := q.take(c.hash)
		if got != c.want || found != c.found {
			t.Fatalf("take(%d) = %v, %v; want %v, %v", c.hash, got, found, c.want, c.found)
		}
	}
	for i := range maxPending + 10 {
		q.put(uint64(i), time.Duration(i))
	}
	if n := q.entries.Len(); n != maxPending {
		t.Fatalf("%d entries kept, at most %d", n, maxPending)
	}
	if _, found := q.take(5); found {
		t.Fatal("the oldest entries should have been forgotten")
	}
}
