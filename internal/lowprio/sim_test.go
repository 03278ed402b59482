package lowprio

import (
	"io"
	"math/rand/v2"
	"sort"
	"time"
)

// pkt is a message on a simulated link.
type pkt struct {
	at    time.Duration
	b     []byte
	cross bool
}

// link is one direction of a simulated path on a virtual clock: a FIFO bottleneck of rate
// bytes/s (0: none) with a drop-tail buffer, then a propagation delay, random loss and a random
// extra delay (jitter) that reorders messages.
type link struct {
	delay, jitter time.Duration
	rate          float64
	buffer        int
	loss          float64
	rng           *rand.Rand
	down          bool
	tap           func(now time.Duration, b []byte) // sees every message sent

	busyUntil time.Duration
	inFlight  []pkt
	queueFrom time.Duration   // record queuing delays from this time on (0: never)
	queued    []time.Duration // queuing delays of this flow's messages
	bytes     map[bool]int    // delivered bytes by cross flag, from queueFrom on
}

func newLink(delay time.Duration, seed uint64) *link {
	return &link{delay: delay, rng: rand.New(rand.NewPCG(seed, 1)), bytes: map[bool]int{}}
}

// backlog is the bytes waiting in the bottleneck queue.
func (l *link) backlog(now time.Duration) int {
	if l.rate == 0 || l.busyUntil <= now {
		return 0
	}
	return int((l.busyUntil - now).Seconds() * l.rate)
}

func (l *link) send(now time.Duration, b []byte, cross bool) {
	if l.tap != nil {
		l.tap(now, b)
	}
	if l.down || l.rng.Float64() < l.loss {
		return
	}
	at := now
	if l.rate > 0 {
		if l.buffer > 0 && l.backlog(now)+len(b) > l.buffer {
			return // drop-tail
		}
		start := max(now, l.busyUntil)
		if !cross && l.queueFrom > 0 && now >= l.queueFrom {
			l.queued = append(l.queued, start-now)
		}
		l.busyUntil = start + time.Duration(float64(len(b))/l.rate*1e9)
		at = l.busyUntil
	}
	at += l.delay
	if l.jitter > 0 {
		at += time.Duration(l.rng.Int64N(int64(l.jitter)))
	}
	l.inFlight = append(l.inFlight, pkt{at: at, b: append([]byte(nil), b...), cross: cross})
}

func (l *link) next() time.Duration {
	n := Never
	for _, p := range l.inFlight {
		n = min(n, p.at)
	}
	return n
}

// deliver hands over the messages due by now, oldest first.
func (l *link) deliver(now time.Duration, f func([]byte)) {
	sort.SliceStable(l.inFlight, func(i, j int) bool { return l.inFlight[i].at < l.inFlight[j].at })
	k := 0
	for k < len(l.inFlight) && l.inFlight[k].at <= now {
		p := l.inFlight[k]
		if l.queueFrom > 0 && now >= l.queueFrom {
			l.bytes[p.cross] += len(p.b)
		}
		if !p.cross && !l.down {
			f(p.b)
		}
		k++
	}
	l.inFlight = l.inFlight[k:]
}

// sim runs one transfer of data over fwd (DATA) and rev (ACK). The receiver's clock is offset
// from the sender's, as two hosts' clocks are.
type sim struct {
	s        *Sender
	r        *Receiver
	fwd, rev *link
	now      time.Duration
	offset   time.Duration
	data     []byte
	written  int
	got      []byte
	reading  bool
	open     bool // do not Close after the last byte: more data may follow
	eof      bool
	sErr     error
	rErr     error
	buf      []byte
	// cross keeps the bottleneck's backlog at crossBacklog bytes from crossFrom to crossUntil
	// (a loss-based bulk flow filling the buffer).
	crossFrom, crossUntil time.Duration
	crossBacklog          int
	// maxPipe is the largest number of bytes the sender had in flight.
	maxPipe int
	// ooo counts messages that arrived while the receiver had a gap (reordering or loss).
	ooo int
}

func newSim(cfg Config, s *Sender, data []byte, fwd, rev *link) *sim {
	return &sim{
		s: s, r: NewReceiver(cfg), fwd: fwd, rev: rev, data: data, reading: true,
		offset: 12345 * time.Second, buf: make([]byte, 4096), now: time.Second,
	}
}

// run advances the virtual clock until until, the transfer ends, or stop says so.
func (m *sim) run(until time.Duration, stop func() bool) {
	for m.now < until && !(stop != nil && stop()) {
		m.fwd.deliver(m.now, func(b []byte) {
			if m.r.seqs.n > 0 {
				m.ooo++
			}
			keep(&m.rErr, m.r.OnMessage(m.now+m.offset, b))
		})
		m.rev.deliver(m.now, func(b []byte) { keep(&m.sErr, m.s.OnMessage(m.now, b)) })
		m.readAll()
		if m.written < len(m.data) {
			m.written += m.s.Write(m.data[m.written:])
			if m.written == len(m.data) && !m.open {
				m.s.Close()
			}
		}
		ns := m.s.Poll(m.now, func(b []byte) { m.fwd.send(m.now, b, false) })
		m.maxPipe = max(m.maxPipe, m.s.pipe)
		nr := m.r.Poll(m.now+m.offset, func(b []byte) { m.rev.send(m.now, b, false) })
		if nr != Never {
			nr -= m.offset
		}
		next := min(ns, nr, m.fwd.next(), m.rev.next(), m.crossStep())
		if m.s.Err() != nil && m.r.Err() != nil || m.eof && m.s.Done() {
			return
		}
		if next == Never {
			return // nothing will ever happen again
		}
		m.now = max(next, m.now+time.Microsecond)
	}
}

// crossStep refills the cross flow's backlog and says when to look again.
func (m *sim) crossStep() time.Duration {
	if m.now < m.crossFrom || m.now >= m.crossUntil {
		if m.now < m.crossFrom {
			return m.crossFrom
		}
		return Never
	}
	for m.fwd.backlog(m.now) < m.crossBacklog {
		m.fwd.send(m.now, make([]byte, 1200), true)
	}
	return m.now + time.Millisecond
}

func (m *sim) readAll() {
	for m.reading && !m.eof {
		n, err := m.r.Read(m.buf)
		m.got = append(m.got, m.buf[:n]...)
		if err == io.EOF {
			m.eof = true
		}
		if n == 0 || err != nil {
			return
		}
	}
}

func keep(dst *error, err error) {
	if err != nil && *dst == nil {
		*dst = err
	}
}

func stream(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
