package ring

import (
	"testing"
	"time"
)

type stamp struct {
	seq  uint32
	at   time.Duration
	used bool
	val  int
}

func (s stamp) Stamp() (uint32, time.Duration, bool) { return s.seq, s.at, s.used }

// fill puts n records, one every gap, numbered from first.
func fill(w *Window[stamp], first uint32, n int, gap time.Duration) {
	for i := range n {
		seq := first + uint32(i)
		w.Put(stamp{seq: seq, at: time.Duration(i) * gap, used: true, val: int(seq) * 3})
	}
}

// TestWindowLengthFollowsTheRate: the window grows to hold horizon of records at the rate they
// come, and no further; every record of the horizon (or the last maxLen) is found with its value.
func TestWindowLengthFollowsTheRate(t *testing.T) {
	const horizon = time.Second
	for _, tc := range []struct {
		perSecond, want int
	}{{10, 64}, {50, 64}, {100, 128}, {400, 512}, {1000, 1024}, {5000, 1024}} {
		w := NewWindow[stamp](64, 1024, horizon)
		gap := time.Second / time.Duration(tc.perSecond)
		n := 10 * tc.perSecond
		fill(&w, 65000, n, gap) // crosses 2^16 on the way
		if w.Len() != tc.want {
			t.Errorf("%d/s: %d slots, want %d", tc.perSecond, w.Len(), tc.want)
		}
		keep := min(n, int(horizon/gap), 1024)
		for i := n - keep; i < n; i++ {
			seq := 65000 + uint32(i)
			if r := w.Slot(seq); !r.used || r.seq != seq || r.val != int(seq)*3 {
				t.Fatalf("%d/s: record %d of the horizon: %+v", tc.perSecond, seq, *r)
			}
		}
	}
}

// TestWindowKeepsRecordsWhenItGrows: what was stored before a doubling is found after it, each
// record in its own slot.
func TestWindowKeepsRecordsWhenItGrows(t *testing.T) {
	w := NewWindow[stamp](16, 256, time.Hour)
	fill(&w, 7, 100, time.Millisecond)
	if w.Len() != 128 {
		t.Fatalf("%d slots for 100 records within the horizon, want 128", w.Len())
	}
	for seq := uint32(7); seq < 107; seq++ {
		if r := w.Slot(seq); r.seq != seq || r.val != int(seq)*3 {
			t.Fatalf("record %d: %+v", seq, *r)
		}
	}
	w.Reset()
	if r := w.Slot(50); r.used || w.Len() != 128 {
		t.Fatalf("after Reset: slot %+v, %d slots", *r, w.Len())
	}
}

// TestWindowPutsWithoutAllocating: once grown to the rate, storing allocates nothing.
func TestWindowPutsWithoutAllocating(t *testing.T) {
	w := NewWindow[stamp](16, 1024, time.Second)
	var seq uint32
	put := func() {
		w.Put(stamp{seq: seq, at: time.Duration(seq) * time.Millisecond, used: true})
		seq++
	}
	for range 3000 {
		put()
	}
	if a := testing.AllocsPerRun(1000, put); a != 0 {
		t.Fatalf("%v allocations per record", a)
	}
}

func BenchmarkWindowPut(b *testing.B) {
	w := NewWindow[stamp](16, 1024, time.Second)
	b.ReportAllocs()
	for i := range b.N {
		w.Put(stamp{seq: uint32(i), at: time.Duration(i) * time.Millisecond, used: true})
	}
}
