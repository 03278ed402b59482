// Package sim is strata's deterministic discrete-event network simulator.
//
// A Sim owns one event queue, a pool of packets, a set of one-way links and a
// set of flows. Simulated time is a time.Duration since the start of the run;
// nothing in the package reads the wall clock, so the same configuration and
// seed always produce the same results. Each random component (a link's loss
// model, its jitter, a codec's noise, a flow's start jitter) draws from its own
// PRNG seeded from the run seed and the component's name, so adding a flow
// does not perturb the random numbers another flow sees.
//
// Links compute a packet's departure time when it is enqueued (the capacity
// schedule is known in advance), so a packet costs one event per hop.
package sim

import "time"

// Handler receives events from the scheduler.
type Handler interface {
	HandleEvent(ev Event)
}

// Event is one scheduled occurrence. Kind and Arg are interpreted by the
// handler; Pkt is an optional packet the event carries.
type Event struct {
	At   time.Duration
	H    Handler
	Pkt  *Packet
	Kind int32
	Arg  int64
}

// key is a heap entry. It holds no pointers, so moving entries around the
// heap costs no GC write barriers; the event itself waits in a slot.
type key struct {
	at   time.Duration
	seq  uint64
	slot int32
}

// before orders events by time and, for equal times, by scheduling order, so
// that ties break the same way on every run.
func (k *key) before(o *key) bool {
	if k.at != o.at {
		return k.at < o.at
	}
	return k.seq < o.seq
}

// Scheduler is a 4-ary min-heap of events. A 4-ary heap halves the depth of a
// binary one and keeps siblings close in memory, which matters because the
// simulator spends much of its time here.
type Scheduler struct {
	now   time.Duration
	seq   uint64
	heap  []key
	slots []Event
	free  []int32
	// Processed counts events handled so far.
	Processed uint64
}

// Now is the current simulated time.
func (s *Scheduler) Now() time.Duration { return s.now }

// Len is the number of pending events.
func (s *Scheduler) Len() int { return len(s.heap) }

// Schedule queues an event. Events scheduled in the past run at the current
// time, after the events already due.
func (s *Scheduler) Schedule(at time.Duration, h Handler, kind int32, arg int64, pkt *Packet) {
	if at < s.now {
		at = s.now
	}
	var slot int32
	if n := len(s.free); n > 0 {
		slot = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		slot = int32(len(s.slots))
		s.slots = append(s.slots, Event{})
	}
	s.slots[slot] = Event{At: at, H: h, Pkt: pkt, Kind: kind, Arg: arg}
	s.seq++
	s.heap = append(s.heap, key{at: at, seq: s.seq, slot: slot})
	s.up(len(s.heap) - 1)
}

// Pop removes and returns the earliest event; ok is false when none is left.
func (s *Scheduler) Pop() (ev Event, ok bool) {
	n := len(s.heap)
	if n == 0 {
		return Event{}, false
	}
	top := s.heap[0]
	last := n - 1
	s.heap[0] = s.heap[last]
	s.heap = s.heap[:last]
	if last > 0 {
		s.down(0)
	}
	ev = s.slots[top.slot]
	s.slots[top.slot] = Event{}
	s.free = append(s.free, top.slot)
	return ev, true
}

// Peek returns the time of the earliest event.
func (s *Scheduler) Peek() (time.Duration, bool) {
	if len(s.heap) == 0 {
		return 0, false
	}
	return s.heap[0].at, true
}

// RunUntil handles events in order until the queue is empty or the next
// event is later than end. The clock is left at end.
func (s *Scheduler) RunUntil(end time.Duration) {
	for len(s.heap) > 0 && s.heap[0].at <= end {
		ev, _ := s.Pop()
		s.now = ev.At
		s.Processed++
		ev.H.HandleEvent(ev)
	}
	if s.now < end {
		s.now = end
	}
}

func (s *Scheduler) up(i int) {
	h := s.heap
	k := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !k.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = k
}

func (s *Scheduler) down(i int) {
	h := s.heap
	n := len(h)
	k := h[i]
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		best := first
		end := min(first+4, n)
		for c := first + 1; c < end; c++ {
			if h[c].before(&h[best]) {
				best = c
			}
		}
		if !h[best].before(&k) {
			break
		}
		h[i] = h[best]
		i = best
	}
	h[i] = k
}
