package ring

import "testing"

// TestRingIsAFIFOAcrossGrowthAndWrap: values come out in the order they went in, whatever the
// interleaving of pushes and pops that makes the buffer wrap and grow.
func TestRingIsAFIFOAcrossGrowthAndWrap(t *testing.T) {
	r := New[int](3)
	next, want := 0, 0
	for round := range 200 {
		for range round % 7 {
			r.Push(next)
			next++
		}
		for range round % 5 {
			if r.Len() == 0 {
				break
			}
			if got := r.Pop(); got != want {
				t.Fatalf("round %d: popped %d, want %d", round, got, want)
			}
			want++
		}
		if r.Len() != next-want {
			t.Fatalf("round %d: Len %d, want %d", round, r.Len(), next-want)
		}
		for i := range r.Len() {
			if got := *r.At(i); got != want+i {
				t.Fatalf("round %d: At(%d) = %d, want %d", round, i, got, want+i)
			}
		}
	}
	if len(r.buf)&(len(r.buf)-1) != 0 {
		t.Fatalf("buffer of %d is not a power of two", len(r.buf))
	}
}

// TestZeroRingAndDiscard: the zero value works; Discard clears what it drops (no references
// kept) and stops at empty.
func TestZeroRingAndDiscard(t *testing.T) {
	var r Ring[*int]
	vals := make([]int, 40)
	for i := range vals {
		r.Push(&vals[i])
	}
	r.Discard(30)
	if r.Len() != 10 || *r.Front() != &vals[30] {
		t.Fatalf("after Discard(30): Len %d, front %p, want 10 and %p", r.Len(), *r.Front(), &vals[30])
	}
	for i, p := range r.buf {
		inQueue := false
		for k := range r.Len() {
			inQueue = inQueue || &r.buf[(r.head+k)&(len(r.buf)-1)] == &r.buf[i]
		}
		if !inQueue && p != nil {
			t.Fatalf("slot %d still holds a dropped value", i)
		}
	}
	r.Discard(100)
	if r.Len() != 0 {
		t.Fatalf("Len %d after discarding everything", r.Len())
	}
}

func TestAtOutOfRangePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("At(Len) did not panic")
		}
	}()
	r := New[int](4)
	r.Push(1)
	r.At(1)
}

// TestSteadyStateAllocatesNothing: once grown, pushing and popping allocate nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	r := New[[4]int64](64)
	if a := testing.AllocsPerRun(1000, func() {
		for range 50 {
			r.Push([4]int64{1})
		}
		for range 50 {
			_ = r.Pop()
		}
	}); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}

func BenchmarkPushPop(b *testing.B) {
	r := New[[4]int64](64)
	for b.Loop() {
		r.Push([4]int64{1})
		_ = r.Pop()
	}
}
