package netem

import (
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// chanDev is a Device fed from a channel that records what is written.
type chanDev struct {
	in     chan []byte
	mu     sync.Mutex
	out    [][]byte
	at     []time.Time
	closed chan struct{}
	once   sync.Once
}

func newChanDev() *chanDev { return &chanDev{in: make(chan []byte, 1024), closed: make(chan struct{})} }

func (d *chanDev) Read(b []byte) (int, error) {
	select {
	case p := <-d.in:
		return copy(b, p), nil
	case <-d.closed:
		return 0, io.EOF
	}
}

func (d *chanDev) Write(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.out = append(d.out, append([]byte(nil), b...))
	d.at = append(d.at, time.Now())
	return len(b), nil
}

func (d *chanDev) Close() error { d.once.Do(func() { close(d.closed) }); return nil }

func (d *chanDev) written() ([][]byte, []time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out, d.at
}

type recorder struct {
	mu        sync.Mutex
	admitted  []sim.Admission
	delivered int
}

func (r *recorder) Admit(pkt []byte, now time.Duration, a sim.Admission) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.admitted = append(r.admitted, a)
	return uint64(len(r.admitted))
}

func (r *recorder) Deliver(pkt []byte, now, late time.Duration, tag uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delivered++
}

func newTestLink(t *testing.T, cfg sim.LinkConfig) (*Link, *chanDev, *recorder) {
	t.Helper()
	cfg.Name = "l"
	d, rec := newChanDev(), &recorder{}
	l, err := New(d, Config{Link: cfg, Seed: 1, Duration: 10 * time.Second, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, d, rec
}

// TestLinkTimesAndKeepsOrder: a burst crosses a 8 Mbit/s link with 20 ms
// delay and 10 ms jitter in order, each packet no earlier than the model
// says, and the link's counters match.
func TestLinkTimesAndKeepsOrder(t *testing.T) {
	l, d, rec := newTestLink(t, sim.LinkConfig{Rate: sim.ConstantRate(8e6), Delay: 20 * time.Millisecond,
		Jitter: 10 * time.Millisecond, Queue: sim.Limit{Unit: sim.LimitPackets, Value: 15}})
	t0 := time.Now()
	l.Start(t0)
	for i := range 20 {
		p := make([]byte, 1000)
		p[0], p[1] = 0x45, byte(i) // not a valid IPv4 header: forwarded unclassified
		d.in <- p
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.Counters().Written < 16 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	out, at := d.written()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(out) != 16 || rec.delivered != 16 {
		t.Fatalf("%d packets written, %d delivered; want 16 (one in service, 15 queued, 4 dropped)", len(out), rec.delivered)
	}
	for i, p := range out {
		if p[1] != byte(i) {
			t.Fatalf("packet %d came out as %d-th: order not kept", p[1], i)
		}
		a := rec.admitted[i]
		if a.Verdict != sim.Admitted || at[i].Sub(t0) < a.Arrive {
			t.Fatalf("packet %d: verdict %v, written at %v, due at %v", i, a.Verdict, at[i].Sub(t0), a.Arrive)
		}
	}
	s, c := l.Stats(), l.Counters()
	if s.Drops != 4 || c.Read != 20 || c.NonIPv4 != 20 || c.Realtime > 2 {
		t.Fatalf("stats %+v counters %+v", s, c)
	}
}

// TestLinkSurvivesGarbageCollection: the link's threads wait in raw
// syscalls holding Go processors; collections (which stop the world) must
// still get through, with the link idle and busy.
func TestLinkSurvivesGarbageCollection(t *testing.T) {
	l, d, _ := newTestLink(t, sim.LinkConfig{Rate: sim.ConstantRate(100e6), Delay: time.Millisecond})
	l.Start(time.Now())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			if i%2 == 0 {
				d.in <- make([]byte, 100)
			}
			runtime.GC()
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("garbage collections stalled behind the link's threads")
	}
	closed := make(chan error)
	go func() { closed <- l.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung")
	}
}
