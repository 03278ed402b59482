package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

type recorder struct{ got []Event }

func (r *recorder) HandleEvent(ev Event) { r.got = append(r.got, ev) }

func TestSchedulerOrdersByTimeThenInsertion(t *testing.T) {
	var s Scheduler
	r := &recorder{}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	for i := 0; i < n; i++ {
		// Few distinct times, so many ties.
		s.Schedule(time.Duration(rng.IntN(50))*time.Millisecond, r, 0, int64(i), nil)
	}
	s.RunUntil(time.Hour)
	if len(r.got) != n {
		t.Fatalf("handled %d events, want %d", len(r.got), n)
	}
	for i := 1; i < n; i++ {
		a, b := r.got[i-1], r.got[i]
		if a.At > b.At || (a.At == b.At && a.Arg > b.Arg) {
			t.Fatalf("event %d (at %v arg %d) after (at %v arg %d)", i, b.At, b.Arg, a.At, a.Arg)
		}
	}
}

func TestSchedulerRunUntilStopsAtEnd(t *testing.T) {
	var s Scheduler
	r := &recorder{}
	for _, ms := range []int{30, 10, 20, 40} {
		s.Schedule(time.Duration(ms)*time.Millisecond, r, 0, int64(ms), nil)
	}
	s.RunUntil(25 * time.Millisecond)
	if len(r.got) != 2 || r.got[0].Arg != 10 || r.got[1].Arg != 20 {
		t.Fatalf("got %+v", r.got)
	}
	if s.Now() != 25*time.Millisecond || s.Len() != 2 {
		t.Fatalf("now %v len %d", s.Now(), s.Len())
	}
	// An event scheduled in the past runs now, after events already due.
	s.Schedule(0, r, 0, 99, nil)
	s.RunUntil(time.Second)
	if r.got[2].Arg != 99 || r.got[2].At != 25*time.Millisecond {
		t.Fatalf("past event ran as %+v", r.got[2])
	}
}

type chain struct {
	s    *Scheduler
	left int
}

func (c *chain) HandleEvent(ev Event) {
	if c.left > 0 {
		c.left--
		c.s.Schedule(ev.At+time.Microsecond, c, 0, 0, nil)
	}
}

func TestSchedulerDoesNotAllocateInSteadyState(t *testing.T) {
	var s Scheduler
	c := &chain{s: &s}
	for i := 0; i < 64; i++ {
		s.Schedule(time.Duration(i), c, 0, 0, nil)
	}
	c.left = 1000
	s.RunUntil(time.Hour) // grow the heap once
	allocs := testing.AllocsPerRun(10, func() {
		c.left = 1000
		s.Schedule(s.Now(), c, 0, 0, nil)
		s.RunUntil(s.Now() + time.Hour)
	})
	if allocs > 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}

func BenchmarkScheduler(b *testing.B) {
	var s Scheduler
	c := &chain{s: &s}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 256; i++ {
		s.Schedule(time.Duration(rng.IntN(1000)), c, 0, 0, nil)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev, _ := s.Pop()
		s.Schedule(ev.At+time.Duration(rng.IntN(1000)), c, 0, 0, nil)
	}
}
