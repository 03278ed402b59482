package lowprio

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/ledbat"
	"github.com/strata-rtc/strata/internal/ring"
)

// Never is the deadline Poll returns when nothing is scheduled.
const Never = time.Duration(math.MaxInt64)

const (
	reorderThreshold = 3 // later-sent messages acknowledged before a message counts as lost
	maxProbeInterval = 30 * time.Second
	// pacingBurst is how many messages the pacer lets go back to back after a pause.
	pacingBurst = 2
	// maxSeq leaves room for the FIN: sequence numbers do not wrap (4 × 10⁹ messages, 4 TB).
	maxSeq = math.MaxUint32 - 1
)

// segment is one DATA or FIN message in flight, by sequence number.
type segment struct {
	seq    uint32
	off    uint64
	n      int
	fin    bool
	sentAt time.Duration
	xmit   uint64 // transmission order: RACK's notion of "sent later"
	acked  bool
	lost   bool
}

// Sender sends one stream. It is not safe for concurrent use: the binding serializes calls.
type Sender struct {
	cfg  Config
	ctrl *ledbat.Controller
	rtt  cc.RTTEstimator
	buf  []byte // send ring: byte at offset o is at o % len(buf)
	segs ring.Ring[segment]

	una, next, end  uint64 // first unacknowledged, next new and end-of-written offsets
	unaSeq, nextSeq uint32
	limit           uint64 // the peer's receive limit
	pipe, flight    int    // bytes in the network (not acked, not lost); bytes not acked
	xmits           uint64
	rackXmit        uint64
	owdRef          time.Duration
	owdSet          bool

	capWindow int
	capRate   cc.Bitrate

	closed, finSent, done bool
	err                   error
	resetSent             bool

	lastRecv, rtoAt, probeAt time.Duration
	sendAt                   time.Duration // the pacer's next send time
	firstSent                time.Duration // the first transmission: no echo is older
	probeInterval            time.Duration

	stats   SenderStats
	scratch []byte
	msg     Message
}

// SenderStats is a sender's progress.
type SenderStats struct {
	Acked       uint64 // bytes acknowledged in order
	Sent        uint64 // bytes sent, retransmissions included
	Retransmits int
	Timeouts    int
	InFlight    int
	Cwnd        int
	QueueDelay  time.Duration
	RTT         time.Duration
}

// NewSender returns a sender. A nil controller means RFC 6817 LEDBAT with the message size as MSS.
func NewSender(cfg Config, ctrl *ledbat.Controller) *Sender {
	cfg = cfg.withDefaults()
	if ctrl == nil {
		ctrl = ledbat.New(ledbat.WithMSS(cfg.MaxMessage))
	}
	s := &Sender{
		cfg: cfg, ctrl: ctrl, rtt: cc.NewRTTEstimator(),
		buf:     make([]byte, cfg.SendBuffer),
		segs:    ring.New[segment](256),
		limit:   uint64(cfg.InitialWindow),
		scratch: make([]byte, max(cfg.MaxMessage, resetHeader+maxReason)),
		rtoAt:   Never, probeAt: Never, lastRecv: -1,
	}
	s.rtt.MinRTO = cfg.MinRTO
	return s
}

// Write buffers up to len(p) bytes and returns how many it took (0 when the buffer is full,
// after Close, or after an error).
func (s *Sender) Write(p []byte) int {
	if s.closed || s.err != nil {
		return 0
	}
	n := min(len(p), len(s.buf)-int(s.end-s.una))
	for done := 0; done < n; {
		i := int(s.end % uint64(len(s.buf)))
		c := copy(s.buf[i:], p[done:n])
		done += c
		s.end += uint64(c)
	}
	return n
}

// Close ends the stream: a FIN follows the last written byte.
func (s *Sender) Close() { s.closed = true }

// Abort ends the transfer with a RESET carrying reason.
func (s *Sender) Abort(reason string) {
	if s.err == nil {
		s.err = &ResetError{Code: CodeAbort, Reason: reason}
	}
}

// SetCap limits the window from outside (the server's GCC headroom): at most window bytes in
// flight and at most rate × SRTT. Zero removes a limit.
func (s *Sender) SetCap(window int, rate cc.Bitrate) { s.capWindow, s.capRate = window, rate }

// Err is the error that ended the transfer, or nil.
func (s *Sender) Err() error { return s.err }

// Done reports that every byte and the FIN were acknowledged.
func (s *Sender) Done() bool { return s.done }

// Stats reports progress.
func (s *Sender) Stats() SenderStats {
	st := s.stats
	st.Acked, st.InFlight, st.Cwnd = s.una, s.flight, s.ctrl.Cwnd()
	st.QueueDelay, st.RTT = s.ctrl.QueueDelay(), s.rtt.SRTT()
	return st
}

// Writable is how many bytes Write would accept now.
func (s *Sender) Writable() int { return len(s.buf) - int(s.end-s.una) }

// window is the most the sender may have in the network.
func (s *Sender) window() int {
	w := s.ctrl.Cwnd()
	if s.capWindow > 0 {
		w = min(w, s.capWindow)
	}
	if s.capRate > 0 && s.rtt.Sampled() {
		w = min(w, int(float64(s.capRate)/8*s.rtt.SRTT().Seconds()))
	}
	return w
}

// fail ends the transfer with err (the first error wins).
func (s *Sender) fail(err error) error {
	if s.err == nil {
		s.err = err
	}
	return err
}

// OnMessage processes a message from the receiver (ACK or RESET).
func (s *Sender) OnMessage(now time.Duration, b []byte) error {
	if s.err != nil {
		return s.err
	}
	m := &s.msg
	if err := Decode(b, m); err != nil {
		return s.fail(err)
	}
	if m.Transfer != s.cfg.Transfer {
		return ErrWrongTransfer
	}
	switch m.Type {
	case TypeReset:
		s.resetSent = true // no RESET in answer to a RESET
		return s.fail(&ResetError{Code: m.Code, Reason: string(m.Reason)})
	case TypeAck:
		return s.onAck(now, m)
	}
	return ErrUnexpected // DATA or FIN: the binding routes them to the Receiver
}

func (s *Sender) onAck(now time.Duration, m *Message) error {
	if m.CumSeq > s.nextSeq || (m.NRanges > 0 && m.Ranges[m.NRanges-1].End > s.nextSeq) {
		return s.fail(ErrForgedAck)
	}
	s.lastRecv = now
	if m.Limit > s.limit {
		s.limit, s.probeAt, s.probeInterval = m.Limit, Never, 0
	}
	flightBefore := s.flight
	acked := 0
	for seq := s.unaSeq; seq < m.CumSeq; seq++ {
		acked += s.markAcked(s.segs.At(int(seq - s.unaSeq)))
	}
	for _, r := range m.SACK() {
		for seq := max(r.Start, s.unaSeq); seq < r.End; seq++ {
			acked += s.markAcked(s.segs.At(int(seq - s.unaSeq)))
		}
	}
	advanced := s.popAcked()
	if acked > 0 || advanced {
		s.sample(now, m, acked, flightBefore)
	}
	if advanced {
		s.rtoAt = Never
		if s.segs.Len() > 0 {
			s.rtoAt = now + s.rtt.RTO()
		}
	}
	s.detectLoss(now)
	return nil
}

// markAcked marks one segment acknowledged and returns its newly acknowledged bytes.
func (s *Sender) markAcked(g *segment) int {
	if g.acked {
		return 0
	}
	g.acked = true
	if !g.lost {
		s.pipe -= g.n
	}
	s.flight -= g.n
	s.rackXmit = max(s.rackXmit, g.xmit)
	return g.n
}

// popAcked drops acknowledged segments from the front and frees their bytes.
func (s *Sender) popAcked() bool {
	moved := false
	for s.segs.Len() > 0 && s.segs.Front().acked {
		g := s.segs.Pop()
		s.una, s.unaSeq, moved = g.off+uint64(g.n), g.seq+1, true
		s.done = g.fin
	}
	return moved
}

// sample feeds the controller: RTT from the echoed timestamp (our own clock, so retransmissions
// are unambiguous), one-way delay from the receiver's clock offset by the first sample.
func (s *Sender) sample(now time.Duration, m *Message, acked, flight int) {
	rtt := since(now, m.EchoTS)
	var owd time.Duration
	if rtt >= 0 && rtt <= now-s.firstSent { // else an echo we never sent: no delay sample
		s.rtt.Update(rtt)
		owd = time.Duration(int32(m.RecvTS-m.EchoTS)) * time.Microsecond
		if !s.owdSet {
			s.owdRef, s.owdSet = owd, true
		}
		// The offset is arbitrary (clocks differ); a constant keeps the sample positive, which
		// the controller needs (0 means "no sample"), and cancels against the base delay.
		owd = max(owd-s.owdRef+time.Second, time.Microsecond)
	} else {
		rtt = 0
	}
	if acked > 0 {
		s.ctrl.OnAck(cc.Ack{Now: now, Acked: acked, InFlight: flight, RTT: rtt, OneWayDelay: owd})
	}
}

// reorderWindow is RACK's time threshold beyond the RTT.
func (s *Sender) reorderWindow() time.Duration {
	return max(s.rtt.SRTT()/4, time.Millisecond)
}

// detectLoss marks lost the segments sent before the newest acknowledged one that are either
// reorderThreshold transmissions older or older than SRTT + reorder window; it returns when the
// next one would time out.
func (s *Sender) detectLoss(now time.Duration) time.Duration {
	next, lost := Never, false
	wait := s.rtt.SRTT() + s.reorderWindow()
	for i := range s.segs.Len() {
		g := s.segs.At(i)
		if g.acked || g.lost || g.xmit >= s.rackXmit {
			continue
		}
		if s.rackXmit-g.xmit >= reorderThreshold || now >= g.sentAt+wait {
			g.lost, lost = true, true
			s.pipe -= g.n
			continue
		}
		next = min(next, g.sentAt+wait)
	}
	if lost {
		s.ctrl.OnLoss(now, 0)
	}
	return next
}

// outstanding reports that the sender expects to hear from the peer: the transfer started and
// is not done (unacknowledged messages, data held back, or an open stream kept alive), or data
// or a FIN wait for their first transmission.
func (s *Sender) outstanding() bool {
	return (s.nextSeq > 0 && !s.done) || s.next < s.end || (s.closed && !s.finSent)
}

// Poll emits the messages that may be sent now through out (each valid only during the call)
// and returns when Poll wants to be called again (Never: only after new input).
func (s *Sender) Poll(now time.Duration, out func(msg []byte)) time.Duration {
	if s.err != nil {
		s.emitReset(out)
		return Never
	}
	if s.done {
		return Never
	}
	if s.lastRecv < 0 {
		s.lastRecv = now // the idle clock starts with the transfer
	}
	if s.outstanding() && now-s.lastRecv >= s.cfg.IdleTimeout {
		s.fail(ErrIdleTimeout)
		s.emitReset(out)
		return Never
	}
	if now >= s.rtoAt {
		s.timeout(now)
	}
	next := s.detectLoss(now)
	s.retransmit(now, out)
	s.sendNew(now, out)
	s.probe(now, out)
	next = min(next, s.rtoAt, s.probeAt)
	if s.sendAt > now && s.wantsToSend() {
		next = min(next, s.sendAt)
	}
	if s.outstanding() {
		next = min(next, s.lastRecv+s.cfg.IdleTimeout)
	}
	return next
}

// timeout is RFC 6298 §5.4–5.6: everything outstanding is lost, the RTO backs off.
func (s *Sender) timeout(now time.Duration) {
	s.rtoAt = Never
	if s.segs.Len() == 0 {
		return
	}
	for i := range s.segs.Len() {
		if g := s.segs.At(i); !g.acked && !g.lost {
			g.lost = true
			s.pipe -= g.n
		}
	}
	s.stats.Timeouts++
	s.rtt.Backoff()
	s.ctrl.OnTimeout(now, 0)
}

// fits reports whether n more bytes may enter the network now: the pacer allows it and the
// window has room; one message always may when the network is empty, so a window below a
// message never stalls the transfer.
func (s *Sender) fits(now time.Duration, n int) bool {
	return now >= s.sendAt && (s.pipe == 0 || s.pipe+n <= s.window())
}

// wantsToSend reports that a retransmission or new data waits (for the pacer or the window).
func (s *Sender) wantsToSend() bool {
	if s.next < min(s.end, s.limit) {
		return true
	}
	for i := range s.segs.Len() {
		if g := s.segs.At(i); g.lost && !g.acked {
			return true
		}
	}
	return false
}

// pace spreads a window's messages over the RTT at the controller's pacing rate (1.25 × cwnd per
// SRTT, or the external rate cap if lower), so that a window does not reach the bottleneck as
// one burst that the media's delay-based estimate would see as congestion.
func (s *Sender) pace(now time.Duration, n int) {
	rate := s.ctrl.PacingRate()
	if s.capRate > 0 && (rate == 0 || s.capRate < rate) {
		rate = s.capRate
	}
	if rate <= 0 {
		return
	}
	bytes := float64(DataHeader + n)
	gap := time.Duration(bytes * 8 / float64(rate) * float64(time.Second))
	s.sendAt = max(s.sendAt, now-pacingBurst*gap) + gap
}

func (s *Sender) retransmit(now time.Duration, out func([]byte)) {
	for i := 0; i < s.segs.Len(); i++ {
		g := s.segs.At(i)
		if !g.lost || g.acked {
			continue
		}
		if !s.fits(now, g.n) {
			return
		}
		g.lost = false
		s.stats.Retransmits++
		s.transmit(now, g, out)
	}
}

func (s *Sender) sendNew(now time.Duration, out func([]byte)) {
	for s.next < s.end {
		n := min(int(s.end-s.next), s.cfg.MaxMessage-DataHeader)
		if s.next+uint64(n) > s.limit {
			n = int(min(uint64(n), s.limit-min(s.limit, s.next)))
			if n == 0 {
				return // the peer's window is closed: probe()
			}
		}
		if !s.fits(now, n) {
			return
		}
		if s.nextSeq >= maxSeq {
			s.fail(ErrTooLong)
			return
		}
		s.segs.Push(segment{seq: s.nextSeq, off: s.next, n: n})
		s.nextSeq++
		s.next += uint64(n)
		s.flight += n
		s.transmit(now, s.segs.At(s.segs.Len()-1), out)
	}
	if s.closed && !s.finSent {
		s.finSent = true
		s.segs.Push(segment{seq: s.nextSeq, off: s.end, fin: true})
		s.nextSeq++
		s.transmit(now, s.segs.At(s.segs.Len()-1), out)
	}
}

// transmit encodes and emits one segment.
func (s *Sender) transmit(now time.Duration, g *segment, out func([]byte)) {
	if s.xmits == 0 {
		s.firstSent = now
	}
	s.xmits++
	g.sentAt, g.xmit = now, s.xmits
	s.pipe += g.n
	s.stats.Sent += uint64(g.n)
	s.pace(now, g.n)
	if s.rtoAt == Never {
		s.rtoAt = now + s.rtt.RTO()
	}
	var b []byte
	if g.fin {
		b, _ = EncodeFin(s.scratch, s.cfg.Transfer, g.seq, ts(now), g.off)
	} else {
		b, _ = EncodeData(s.scratch, s.cfg.Transfer, g.seq, ts(now), g.off, nil)
		b = b[:DataHeader+g.n]
		for done := 0; done < g.n; {
			o := g.off + uint64(done)
			done += copy(b[DataHeader+done:], s.buf[int(o%uint64(len(s.buf))):])
		}
	}
	out(b)
}

// probe sends a zero-length duplicate DATA when nothing is in flight and either the peer's window
// holds everything back, so that a lost window update cannot stall the transfer (RFC 9293's
// persist timer, backed off), or the application has nothing to send but has not closed, so
// that the receiver's idle timeout tells a silent stream from a vanished sender (a keepalive).
// Either way the answer keeps this side's idle clock running too.
func (s *Sender) probe(now time.Duration, out func([]byte)) {
	blocked := s.next < s.end && s.next >= s.limit
	idle := s.next >= s.end && !s.closed
	if s.segs.Len() > 0 || !(blocked || idle) || s.nextSeq == 0 {
		s.probeAt = Never
		return
	}
	keepalive := s.cfg.IdleTimeout / 4
	if s.probeAt == Never {
		s.probeInterval = min(s.rtt.RTO(), keepalive)
		if idle {
			s.probeInterval = keepalive
		}
		s.probeAt = now + s.probeInterval
		return
	}
	if now < s.probeAt {
		return
	}
	b, _ := EncodeData(s.scratch, s.cfg.Transfer, s.nextSeq-1, ts(now), s.next, nil)
	out(b)
	s.probeInterval = min(2*s.probeInterval, maxProbeInterval, keepalive)
	s.probeAt = now + s.probeInterval
}

// emitReset sends one RESET for the error that ended the transfer.
func (s *Sender) emitReset(out func([]byte)) {
	if s.resetSent {
		return
	}
	s.resetSent = true
	out(encodeReset(s.scratch, s.cfg.Transfer, s.err))
}
