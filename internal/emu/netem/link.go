// Package netem is a user-space link emulator: packets read from a device (a
// TUN) cross one sim.LinkCore — the simulator's own admission, marking and
// timing — and are written back to the device when they reach the link's far
// end. Each packet's fate and queueing delay is reported to an Observer.
package netem

import (
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/strata-rtc/strata/internal/ring"
	"github.com/strata-rtc/strata/internal/sim"
)

// Device carries IP packets, one per Read or Write (a TUN file).
type Device interface {
	io.ReadWriteCloser
}

// Observer watches the packets that cross a link. Both calls come from the
// link's own goroutines; they must be quick and must not keep pkt.
type Observer interface {
	// Admit is called as a packet enters the link, with its fate; the tag it
	// returns rides with the packet to Deliver.
	Admit(pkt []byte, now time.Duration, a sim.Admission) (tag uint64)
	// Deliver is called as a packet leaves the far end of the link, just
	// before it is written to the device (so before any next hop can see
	// it); late is how far behind its arrival time the emulator is (the
	// machine's scheduling, not the model: part of the packet's real delay).
	Deliver(pkt []byte, now, late time.Duration, tag uint64)
}

// Config is one emulated link.
type Config struct {
	Link               sim.LinkConfig
	Seed               uint64 // loss and jitter generators, named after the link as in the simulator
	Duration, Interval time.Duration
	MTU                int // packets larger than this are counted in Counters.Oversize (default 1500)
	Observer           Observer
}

// Counters are what the emulator itself saw, beyond the link's statistics.
type Counters struct {
	Read, Written int64 // packets read from and written to the device
	NonIPv4       int64 // packets forwarded without classification (not IPv4)
	Oversize      int64 // packets longer than the MTU (segmentation offload left on)
	MaxSize       int   // the longest packet read
	WriteErrors   int64
	Realtime      int // threads (of 2) running under SCHED_FIFO
	// Late counts packets written more than LateThreshold after their
	// arrival time; MaxLate is the largest lateness seen.
	Late    int64
	MaxLate time.Duration
}

// LateThreshold is the lateness Counters.Late counts.
const LateThreshold = 500 * time.Microsecond

// Link is an emulated one-way link over a device.
type Link struct {
	cfg  Config
	dev  Device
	core *sim.LinkCore
	t0   time.Time

	mu   sync.Mutex         // guards core, pend, free, cnt
	pend ring.Ring[pending] // packets in flight, in arrival order (the link never reorders)
	free [][]byte
	cnt  Counters

	wk        *waker // the reader wakes the writer when the link stops being empty
	started   atomic.Bool
	closed    atomic.Bool
	wg        sync.WaitGroup
	startOnce sync.Once
	closeOnce sync.Once
}

type pending struct {
	buf []byte
	at  time.Duration
	tag uint64
}

// maxRead is the largest packet a read can return: a TUN without offloads
// hands over at most its MTU, but an oversize packet must be seen whole to be
// counted, not truncated.
const maxRead = 65536

// New returns a link over dev; it reads nothing until Start.
func New(dev Device, cfg Config) (*Link, error) {
	if cfg.MTU == 0 {
		cfg.MTU = 1500
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	wk, err := newWaker()
	if err != nil {
		return nil, err
	}
	return &Link{cfg: cfg, dev: dev, core: sim.NewLinkCore(cfg.Link, cfg.Seed, cfg.Duration, cfg.Interval),
		pend: ring.New[pending](256), wk: wk}, nil
}

// Name is the link's name.
func (l *Link) Name() string { return l.cfg.Link.Name }

// Start begins emulating, with t0 as time zero of the link's schedule and statistics.
func (l *Link) Start(t0 time.Time) {
	l.startOnce.Do(func() {
		l.t0 = t0
		l.started.Store(true)
		reserveProcs(2)
		l.wg.Add(2)
		go l.readLoop()
		go l.writeLoop()
	})
}

// now is the time since t0 (never negative).
func (l *Link) now() time.Duration { return max(time.Since(l.t0), 0) }

// Close stops the link and closes its device; packets in flight are lost.
func (l *Link) Close() error {
	var err error
	l.closeOnce.Do(func() {
		l.closed.Store(true)
		l.wk.signal()
		err = l.dev.Close()
		l.wg.Wait()
		if l.started.Load() {
			releaseProcs(2)
		}
		err = errors.Join(err, l.wk.close())
	})
	return err
}

// Stats returns a copy of the link's statistics so far.
func (l *Link) Stats() sim.LinkStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.core.Stats
	s.Bytes = append([]int64(nil), s.Bytes...)
	s.QDelaySum = append([]time.Duration(nil), s.QDelaySum...)
	s.QDelayN = append([]int32(nil), s.QDelayN...)
	s.DropsPerBin = append([]int32(nil), s.DropsPerBin...)
	s.MaxBacklog = append([]int32(nil), s.MaxBacklog...)
	return s
}

// Counters returns the emulator's own counters.
func (l *Link) Counters() Counters {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cnt
}

// realtime puts the link's goroutine on a real-time thread (see Realtime).
func (l *Link) realtime() {
	ok := Realtime()
	l.mu.Lock()
	if ok {
		l.cnt.Realtime++
	}
	l.mu.Unlock()
}

// Realtime locks the calling goroutine to its OS thread and puts the thread
// under SCHED_FIFO with a minimal timer slack, so it reads, sleeps and
// delivers on time on a busy machine (compilers and browsers beside the
// emulation would otherwise delay it by milliseconds). The goroutine must
// exit without unlocking: the thread then ends with it, so the policy never
// reaches other goroutines. It reports false without the privilege, when
// the thread stays an ordinary one.
func Realtime() bool {
	runtime.LockOSThread()
	var p struct{ prio int32 }
	p.prio = rtPriority
	_, _, errno := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, uintptr(unix.SCHED_FIFO), uintptr(unsafe.Pointer(&p)))
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	return errno == 0
}

// Sleep sleeps d with nanosleep, on the calling thread: Go's timers wake up
// to a millisecond late, nanosleep about 60 µs.
func Sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}

// rtPriority is low among real-time priorities: above every ordinary
// process, below the kernel's own real-time threads.
const rtPriority = 10

func (l *Link) readLoop() {
	defer l.wg.Done()
	l.realtime()
	rbuf := make([]byte, maxRead)
	for {
		n, err := l.dev.Read(rbuf)
		if err != nil {
			return // closed
		}
		if n > 0 {
			l.admit(rbuf[:n])
		}
	}
}

// admit offers one packet to the link and queues it for delivery if it is
// admitted. The buffer comes from a free list: nothing is allocated per
// packet once the list has grown to the link's largest backlog.
func (l *Link) admit(pkt []byte) {
	now := l.now()
	h, isIPv4 := ParseIPv4(pkt)
	l.mu.Lock()
	l.cnt.Read++
	l.cnt.MaxSize = max(l.cnt.MaxSize, len(pkt))
	if len(pkt) > l.cfg.MTU {
		l.cnt.Oversize++
	}
	if !isIPv4 {
		l.cnt.NonIPv4++
	}
	a := l.core.Admit(now, len(pkt), isIPv4 && h.ECT())
	if a.Marked {
		markCE(pkt)
	}
	var tag uint64
	if l.cfg.Observer != nil {
		tag = l.cfg.Observer.Admit(pkt, now, a)
	}
	if a.Verdict != sim.Admitted {
		l.mu.Unlock()
		return
	}
	buf := l.getBuf(len(pkt))
	copy(buf, pkt)
	l.pend.Push(pending{buf: buf, at: a.Arrive, tag: tag})
	first := l.pend.Len() == 1
	l.mu.Unlock()
	if first {
		// The writer waits for this packet without a deadline; behind a
		// first one, it already sleeps until the head's time, which a new
		// packet never moves.
		l.wk.signal()
	}
}

func (l *Link) getBuf(n int) []byte {
	if k := len(l.free); k > 0 {
		b := l.free[k-1]
		l.free = l.free[:k-1]
		if cap(b) >= n {
			return b[:n]
		}
	}
	return make([]byte, n, max(n, 2048))
}

// head returns the next packet to deliver.
func (l *Link) head() (pending, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pend.Len() == 0 {
		return pending{}, false
	}
	return *l.pend.Front(), true
}

func (l *Link) pop() {
	l.mu.Lock()
	l.pend.Pop()
	l.mu.Unlock()
}

// writeLoop delivers packets at their arrival times, sleeping on its
// real-time thread in the kernel (ppoll on the waker) rather than on Go's
// timers and channels: waking a goroutine takes another of the process's
// threads, which a busy machine delays by milliseconds.
func (l *Link) writeLoop() {
	defer l.wg.Done()
	l.realtime()
	for !l.closed.Load() {
		p, ok := l.head()
		if !ok {
			l.wk.wait(-1)
			continue
		}
		if wait := p.at - l.now(); wait > 0 {
			l.wk.wait(wait)
			continue
		}
		l.deliver(p)
	}
}

func (l *Link) deliver(p pending) {
	now := l.now()
	late := max(now-p.at, 0)
	if l.cfg.Observer != nil {
		l.cfg.Observer.Deliver(p.buf, now, late, p.tag)
	}
	_, err := l.dev.Write(p.buf)
	l.pop()
	l.mu.Lock()
	if late > LateThreshold {
		l.cnt.Late++
		l.cnt.MaxLate = max(l.cnt.MaxLate, late)
	}
	if err != nil {
		l.cnt.WriteErrors++
	} else {
		l.cnt.Written++
	}
	l.free = append(l.free, p.buf[:cap(p.buf)])
	l.mu.Unlock()
}
