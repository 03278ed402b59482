package lowprio

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc/ledbat"
)

// path builds a symmetric path: one-way delay, bottleneck rate (bit/s) and buffer on the
// forward direction, loss and jitter on both.
func path(delay time.Duration, bps float64, buffer int, loss float64, jitter time.Duration) (*link, *link) {
	fwd, rev := newLink(delay, 1), newLink(delay, 2)
	fwd.rate, fwd.buffer = bps/8, buffer
	for _, l := range []*link{fwd, rev} {
		l.loss, l.jitter = loss, jitter
	}
	return fwd, rev
}

func TestTransferIntact(t *testing.T) {
	cases := []struct {
		name   string
		loss   float64
		jitter time.Duration
		cfg    Config
	}{
		{name: "clean"},
		{name: "loss 5%", loss: 0.05},
		{name: "reordering", jitter: 15 * time.Millisecond},
		{name: "loss 5% and reordering", loss: 0.05, jitter: 15 * time.Millisecond},
		{name: "small buffers", loss: 0.02, cfg: Config{SendBuffer: 3000, RecvBuffer: 8 << 10, InitialWindow: 4 << 10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fwd, rev := path(20*time.Millisecond, 10e6, 0, c.loss, c.jitter)
			data := stream(400<<10, 7)
			m := newSim(c.cfg, NewSender(c.cfg, nil), data, fwd, rev)
			m.run(10*time.Minute, nil)
			if m.sErr != nil || m.rErr != nil || m.s.Err() != nil || m.r.Err() != nil {
				t.Fatalf("errors: sender %v/%v, receiver %v/%v", m.sErr, m.s.Err(), m.rErr, m.r.Err())
			}
			if !m.eof || !m.s.Done() {
				t.Fatalf("not finished at %v: eof %v, done %v, got %d of %d", m.now, m.eof, m.s.Done(), len(m.got), len(data))
			}
			if !bytes.Equal(m.got, data) {
				t.Fatal("stream differs")
			}
			st := m.s.Stats()
			if st.Acked != uint64(len(data)) {
				t.Errorf("acked %d, want %d", st.Acked, len(data))
			}
			if c.loss > 0 && st.Retransmits == 0 {
				t.Error("no retransmissions despite loss")
			}
			if (c.loss > 0 || c.jitter > 0) && m.ooo == 0 {
				t.Error("the path never reordered or lost a message")
			}
			t.Logf("%v: %d messages arrived out of order, %d retransmits, %d timeouts, %.1f s",
				c.name, m.ooo, st.Retransmits, st.Timeouts, (m.now - time.Second).Seconds())
		})
	}
}

// A receiver that stops reading stops the sender once its buffer is full; the sender probes
// the closed window without sending bytes or timing out, and resumes when reading resumes.
func TestReceiverStopsReading(t *testing.T) {
	cfg := Config{RecvBuffer: 32 << 10, InitialWindow: 32 << 10, IdleTimeout: 5 * time.Second}
	fwd, rev := path(10*time.Millisecond, 10e6, 0, 0, 0)
	data := stream(200<<10, 3)
	m := newSim(cfg, NewSender(cfg, nil), data, fwd, rev)
	m.reading = false
	m.run(3*time.Second, nil)
	sent := m.s.Stats().Sent
	if a := m.s.Stats().Acked; a != 32<<10 {
		t.Fatalf("acked %d with a 32 KiB window and no reading", a)
	}
	m.run(23*time.Second, nil) // far beyond the idle timeout
	if err := errors.Join(m.sErr, m.s.Err(), m.r.Err()); err != nil {
		t.Fatalf("stalled transfer failed: %v", err)
	}
	if got := m.s.Stats().Sent; got != sent {
		t.Fatalf("sender sent %d more bytes into a closed window", got-sent)
	}
	if m.r.contig-m.r.read > uint64(len(m.r.buf)) {
		t.Fatal("receiver holds more than its buffer")
	}
	m.reading = true
	m.run(m.now+time.Minute, nil)
	if !m.eof || !bytes.Equal(m.got, data) {
		t.Fatalf("after resuming: eof %v, got %d of %d", m.eof, len(m.got), len(data))
	}
}

// The zero-window probe backs off: few probes over a long stall, each answered.
func TestZeroWindowProbe(t *testing.T) {
	cfg := Config{RecvBuffer: 4 << 10, InitialWindow: 4 << 10, IdleTimeout: time.Hour}
	fwd, rev := path(10*time.Millisecond, 0, 0, 0, 0)
	m := newSim(cfg, NewSender(cfg, nil), stream(64<<10, 4), fwd, rev)
	m.reading = false
	var probes []time.Duration
	fwd.tap = func(now time.Duration, b []byte) {
		if len(b) == DataHeader {
			probes = append(probes, now)
		}
	}
	m.run(2*time.Minute, nil)
	if m.s.Err() != nil || m.r.Err() != nil {
		t.Fatal(m.s.Err(), m.r.Err())
	}
	// RTO 200 ms doubling up to 30 s: 0.2+0.4+…+25.6 ≈ 51 s, then every 30 s.
	if len(probes) < 5 || len(probes) > 12 {
		t.Fatalf("%d probes in 2 min: %v", len(probes), probes)
	}
	for i := 2; i < len(probes); i++ {
		if probes[i]-probes[i-1] < probes[i-1]-probes[i-2] {
			t.Fatalf("probe intervals shrink: %v", probes)
		}
	}
	m.reading = true
	m.run(m.now+5*time.Minute, nil)
	if !m.eof {
		t.Fatal("no resume after the window opened")
	}
}

// A peer that vanishes mid-transfer ends it with ErrIdleTimeout after IdleTimeout.
func TestPeerVanishes(t *testing.T) {
	cfg := Config{IdleTimeout: 5 * time.Second}
	fwd, rev := path(20*time.Millisecond, 5e6, 0, 0, 0)
	m := newSim(cfg, NewSender(cfg, nil), stream(4<<20, 5), fwd, rev)
	m.run(time.Hour, func() bool { return m.s.Stats().Acked > 200<<10 })
	fwd.down, rev.down = true, true
	last := m.s.lastRecv
	m.run(time.Hour, func() bool { return m.s.Err() != nil && m.r.Err() != nil })
	if !errors.Is(m.s.Err(), ErrIdleTimeout) || !errors.Is(m.r.Err(), ErrIdleTimeout) {
		t.Fatalf("errors: sender %v, receiver %v", m.s.Err(), m.r.Err())
	}
	if d := m.now - last; d < cfg.IdleTimeout || d > cfg.IdleTimeout+50*time.Millisecond {
		t.Fatalf("idle timeout after %v, want %v", d, cfg.IdleTimeout)
	}
}

// Windows at their limits: cwnd pinned at LEDBAT's minimum (a negligible gain) and an
// external cap of one byte still move the whole stream, one message at a time for the cap.
func TestWindowsAtLimits(t *testing.T) {
	for _, c := range []struct {
		name    string
		ctrl    *ledbat.Controller
		cap     int
		maxPipe int
	}{
		{name: "min cwnd", ctrl: ledbat.New(ledbat.WithMSS(1100), ledbat.WithGain(1e-9)), maxPipe: 2 * 1100},
		{name: "cap 1 byte", cap: 1, maxPipe: 1100 - DataHeader},
	} {
		t.Run(c.name, func(t *testing.T) {
			fwd, rev := path(20*time.Millisecond, 2e6, 0, 0, 0)
			s := NewSender(Config{}, c.ctrl)
			s.SetCap(c.cap, 0)
			data := stream(100<<10, 6)
			m := newSim(Config{}, s, data, fwd, rev)
			m.run(10*time.Minute, nil)
			if !m.eof || !bytes.Equal(m.got, data) {
				t.Fatalf("eof %v, got %d of %d", m.eof, len(m.got), len(data))
			}
			if m.maxPipe > c.maxPipe {
				t.Fatalf("%d bytes in flight, limit %d", m.maxPipe, c.maxPipe)
			}
		})
	}
}

// An open stream with nothing to send stays alive through keepalives: neither side times out
// during a long pause, the stream resumes, and a sender that vanishes during a pause is noticed.
func TestIdleStreamKeepsAlive(t *testing.T) {
	cfg := Config{IdleTimeout: 5 * time.Second}
	fwd, rev := path(20*time.Millisecond, 5e6, 0, 0, 0)
	data := stream(200<<10, 12)
	m := newSim(cfg, NewSender(cfg, nil), data[:50<<10], fwd, rev)
	m.open = true
	m.run(2*time.Minute, nil)
	if err := errors.Join(m.s.Err(), m.r.Err(), m.sErr, m.rErr); err != nil {
		t.Fatalf("paused stream failed: %v", err)
	}
	m.data, m.open = data, false
	m.run(m.now+time.Minute, nil)
	if !m.eof || !bytes.Equal(m.got, data) {
		t.Fatalf("after the pause: eof %v, got %d of %d", m.eof, len(m.got), len(data))
	}

	fwd, rev = path(20*time.Millisecond, 5e6, 0, 0, 0)
	m = newSim(cfg, NewSender(cfg, nil), data[:50<<10], fwd, rev)
	m.open = true
	m.run(10*time.Second, nil)
	fwd.down, rev.down = true, true
	m.run(time.Minute, func() bool { return m.s.Err() != nil && m.r.Err() != nil })
	if !errors.Is(m.s.Err(), ErrIdleTimeout) || !errors.Is(m.r.Err(), ErrIdleTimeout) {
		t.Fatalf("vanished during a pause: sender %v, receiver %v", m.s.Err(), m.r.Err())
	}
}
