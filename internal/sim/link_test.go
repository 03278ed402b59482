package sim

import (
	"math"
	"testing"
	"time"
)

// sink records what reaches it.
type sink struct {
	s        *Sim
	arrivals []time.Duration
	seqs     []int64
	queued   []time.Duration
	ce       int
}

func (k *sink) Receive(p *Packet) {
	k.arrivals = append(k.arrivals, k.s.Now())
	k.seqs = append(k.seqs, p.Seq)
	k.queued = append(k.queued, p.Queued)
	if p.CE {
		k.ce++
	}
	k.s.Free(p)
}

// burst sends n packets of size bytes into route at time at.
type burst struct {
	s     *Sim
	route *Route
	n     int
	size  int
	ect   bool
	next  int64
}

func (b *burst) HandleEvent(ev Event) {
	for i := 0; i < b.n; i++ {
		p := b.s.NewPacket()
		b.next++
		p.Seq, p.Size, p.SentAt, p.ECT = b.next, b.size, ev.At, b.ect
		b.s.Send(p, b.route)
	}
}

func oneLink(t *testing.T, cfg LinkConfig, dur time.Duration) (*Sim, *Link, *sink, *Route) {
	t.Helper()
	s := New(Config{Seed: 1, Duration: dur})
	if cfg.Name == "" {
		cfg.Name, cfg.From, cfg.To = "l", "a", "b"
	}
	l, err := s.AddLink(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := &sink{s: s}
	return s, l, k, &Route{Links: []*Link{l}, Dst: k}
}

func TestLinkSerialisationAndPropagation(t *testing.T) {
	s, _, k, r := oneLink(t, LinkConfig{Rate: ConstantRate(1e6), Delay: 50 * time.Millisecond}, time.Second)
	s.Schedule(0, &burst{s: s, route: r, n: 3, size: 1250}, 0, 0, nil)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{60 * time.Millisecond, 70 * time.Millisecond, 80 * time.Millisecond}
	for i, w := range want {
		if k.arrivals[i] != w {
			t.Fatalf("packet %d arrived at %v, want %v", i, k.arrivals[i], w)
		}
		if k.queued[i] != time.Duration(i)*10*time.Millisecond {
			t.Fatalf("packet %d queued %v", i, k.queued[i])
		}
	}
}

func TestDropTailLimits(t *testing.T) {
	cases := []struct {
		name  string
		limit Limit
		want  int // delivered out of 10 back-to-back 1000-byte packets
	}{
		{"packets", Limit{LimitPackets, 3}, 4}, // one in service + three waiting
		{"bytes", Limit{LimitBytes, 2500}, 3},  // two fit in 2500 bytes
		{"time", Limit{LimitTime, 0.040}, 6},   // 40 ms at 1 Mbit/s = 5000 bytes
		{"unlimited", Limit{}, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, l, k, r := oneLink(t, LinkConfig{Rate: ConstantRate(1e6), Queue: c.limit}, time.Second)
			s.Schedule(0, &burst{s: s, route: r, n: 10, size: 1000}, 0, 0, nil)
			_ = s.Run()
			if len(k.arrivals) != c.want || l.Stats.Drops != int64(10-c.want) {
				t.Fatalf("delivered %d dropped %d, want %d", len(k.arrivals), l.Stats.Drops, c.want)
			}
		})
	}
}

func TestQueueDrainsThenAcceptsAgain(t *testing.T) {
	s, l, k, r := oneLink(t, LinkConfig{Rate: ConstantRate(1e6), Queue: Limit{LimitPackets, 1}}, time.Second)
	s.Schedule(0, &burst{s: s, route: r, n: 3, size: 1000}, 0, 0, nil)
	s.Schedule(100*time.Millisecond, &burst{s: s, route: r, n: 2, size: 1000}, 0, 0, nil)
	_ = s.Run()
	if len(k.arrivals) != 4 || l.Stats.Drops != 1 {
		t.Fatalf("delivered %d dropped %d", len(k.arrivals), l.Stats.Drops)
	}
}

func TestECNMarksAboveThreshold(t *testing.T) {
	s, l, k, r := oneLink(t, LinkConfig{Rate: ConstantRate(1e6), ECN: Limit{LimitPackets, 2}}, time.Second)
	s.Schedule(0, &burst{s: s, route: r, n: 6, size: 1000, ect: true}, 0, 0, nil)
	_ = s.Run()
	// Waiting counts seen by packets 1..6: 0,0,1,2,3,4 -> the last two exceed 2.
	if k.ce != 2 || l.Stats.Marks != 2 {
		t.Fatalf("marked %d (%d)", k.ce, l.Stats.Marks)
	}
}

func TestJitterKeepsOrderAndBounds(t *testing.T) {
	cfg := LinkConfig{Rate: ConstantRate(100e6), Delay: 10 * time.Millisecond, Jitter: 20 * time.Millisecond}
	s, _, k, r := oneLink(t, cfg, 10*time.Second)
	for i := 0; i < 1000; i++ {
		s.Schedule(time.Duration(i)*time.Millisecond, &burst{s: s, route: r, n: 1, size: 100, next: int64(i)}, 0, 0, nil)
	}
	_ = s.Run()
	spread := 0.0
	for i := range k.arrivals {
		if i > 0 && k.seqs[i] < k.seqs[i-1] {
			t.Fatal("jitter reordered packets")
		}
		extra := (k.arrivals[i] - time.Duration(k.seqs[i]-1)*time.Millisecond - 10*time.Millisecond).Seconds()
		if extra < 0 || extra > 0.031 {
			t.Fatalf("packet %d extra delay %v", i, extra)
		}
		spread = math.Max(spread, extra)
	}
	if spread < 0.015 {
		t.Fatalf("jitter spread only %v", spread)
	}
}

func TestUtilizationFollowsSchedule(t *testing.T) {
	// Saturate a link whose capacity halves at 1 s; it should be ~fully used.
	sched := RateSchedule{{0, 1e6}, {time.Second, 5e5}}
	s, l, _, r := oneLink(t, LinkConfig{Rate: sched}, 2*time.Second)
	s.Schedule(0, &burst{s: s, route: r, n: 400, size: 1000}, 0, 0, nil)
	_ = s.Run()
	// 1e6 + 0.5e6 bits of capacity = 187.5 packets by 2 s.
	if l.Stats.TxPackets != 187 {
		t.Fatalf("sent %d packets by the end", l.Stats.TxPackets)
	}
	if u := l.Stats.Utilization(2 * time.Second); math.Abs(u-187*8000/1.5e6) > 1e-9 {
		t.Fatalf("utilization %v", u)
	}
}
