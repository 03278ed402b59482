package lowprio

import (
	"fmt"
	"io"
	"time"
)

// Receiver reassembles one stream. It is not safe for concurrent use.
type Receiver struct {
	cfg Config
	buf []byte // reassembly ring: byte at offset o is at o % len(buf)

	read, contig uint64 // bytes delivered to the application; bytes received in order
	bytes        spans  // byte runs received above contig
	cumSeq       uint32
	seqs         spans // sequence runs received above cumSeq
	finLen       uint64
	finSeen      bool

	echoTS, recvTS uint32
	pending        int
	ackNow         bool
	ackAt          time.Duration
	advertised     uint64
	lastRecv       time.Duration
	started        bool

	err       error
	resetSent bool
	scratch   []byte
	msg       Message
}

// NewReceiver returns a receiver with a RecvBuffer-byte window.
func NewReceiver(cfg Config) *Receiver {
	cfg = cfg.withDefaults()
	return &Receiver{
		cfg: cfg, buf: make([]byte, cfg.RecvBuffer),
		scratch: make([]byte, max(ackHeader+8*MaxSACKRanges, resetHeader+maxReason)),
		ackAt:   Never,
	}
}

// limit is the receive window's right edge: the free buffer beyond what the application read.
func (r *Receiver) limit() uint64 { return r.read + uint64(len(r.buf)) }

// Err is the error that ended the transfer, or nil.
func (r *Receiver) Err() error { return r.err }

// Received is the number of bytes received in order (progress).
func (r *Receiver) Received() uint64 { return r.contig }

// Complete reports that the whole stream is here: the FIN and every byte before it (some may
// still wait to be read).
func (r *Receiver) Complete() bool { return r.finished() }

func (r *Receiver) fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	return err
}

// Abort ends the transfer with a RESET carrying reason.
func (r *Receiver) Abort(reason string) { r.fail(&ResetError{Code: CodeAbort, Reason: reason}) }

// Read copies in-order bytes into p. It returns io.EOF once the whole stream was read, and
// 0, nil when nothing is available yet.
func (r *Receiver) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n := min(len(p), int(r.contig-r.read))
	for done := 0; done < n; {
		i := int((r.read + uint64(done)) % uint64(len(r.buf)))
		done += copy(p[done:n], r.buf[i:])
	}
	r.read += uint64(n)
	// A window update when reading freed a quarter of the buffer, so a sender held back by a
	// full window resumes without waiting for its probe.
	if r.limit()-r.advertised >= uint64(len(r.buf)/4) {
		r.ackNow = true
	}
	if n == 0 && r.finSeen && r.read == r.finLen {
		return 0, io.EOF
	}
	return n, nil
}

// OnMessage processes a message from the sender (DATA, FIN or RESET).
func (r *Receiver) OnMessage(now time.Duration, b []byte) error {
	if r.err != nil {
		return r.err
	}
	m := &r.msg
	if err := Decode(b, m); err != nil {
		return r.fail(err)
	}
	if m.Transfer != r.cfg.Transfer {
		return ErrWrongTransfer
	}
	switch m.Type {
	case TypeReset:
		r.resetSent = true
		return r.fail(&ResetError{Code: m.Code, Reason: string(m.Reason)})
	case TypeData, TypeFin:
		r.lastRecv, r.started = now, true
		return r.onData(now, m)
	}
	return ErrUnexpected // an ACK: the binding routes it to the Sender
}

func (r *Receiver) onData(now time.Duration, m *Message) error {
	end := m.Offset + uint64(len(m.Payload))
	if err := r.check(m, end); err != nil {
		return r.fail(err)
	}
	r.echoTS, r.recvTS = m.SendTS, ts(now)
	seq := uint64(m.Seq)
	if m.Seq < r.cumSeq || r.seqs.contains(seq, seq+1) {
		r.ackNow = true // a duplicate or a probe: the ACK it lacked
		return nil
	}
	if r.seqs.n >= maxSpans-1 || r.bytes.n >= maxSpans-1 {
		return nil // too fragmented: drop, the sender retransmits
	}
	inOrder := m.Seq == r.cumSeq && r.seqs.n == 0 // filling a hole is acknowledged at once too
	r.seqs.add(seq, seq+1)
	r.cumSeq = uint32(r.seqs.advance(uint64(r.cumSeq)))
	if m.Type == TypeFin {
		r.finSeen, r.finLen, r.ackNow = true, m.Offset, true
	} else if end > r.contig {
		r.store(max(m.Offset, r.contig), m.Payload[max(m.Offset, r.contig)-m.Offset:])
		r.bytes.add(m.Offset, end)
		r.contig = r.bytes.advance(r.contig)
	}
	r.pending++
	if !inOrder || r.pending >= 2 {
		r.ackNow = true
	} else if r.ackAt == Never {
		r.ackAt = now + r.cfg.AckDelay
	}
	return nil
}

// check rejects DATA the sender could not have sent: beyond the window this receiver ever
// advertised, past the end of the stream, or a FIN that contradicts the data.
func (r *Receiver) check(m *Message, end uint64) error {
	if m.Type == TypeData && len(m.Payload) > r.cfg.MaxMessage-DataHeader {
		return fmt.Errorf("%w: %d-byte payload", ErrImpossible, len(m.Payload))
	}
	if end > r.limit() {
		return fmt.Errorf("%w: bytes up to %d, window ends at %d", ErrImpossible, end, r.limit())
	}
	if r.finSeen && (end > r.finLen || (m.Type == TypeFin && m.Offset != r.finLen)) {
		return fmt.Errorf("%w: data up to %d, stream ends at %d", ErrImpossible, end, r.finLen)
	}
	if m.Type == TypeFin && (m.Offset < r.contig || m.Offset < r.bytes.last()) {
		return fmt.Errorf("%w: FIN at %d below received data", ErrImpossible, m.Offset)
	}
	return nil
}

// store copies payload into the ring at offset off.
func (r *Receiver) store(off uint64, p []byte) {
	for done := 0; done < len(p); {
		i := int((off + uint64(done)) % uint64(len(r.buf)))
		done += copy(r.buf[i:], p[done:])
	}
}

// Poll emits an ACK when one is due and returns when it wants to be called again.
func (r *Receiver) Poll(now time.Duration, out func(msg []byte)) time.Duration {
	if r.err == nil && r.started && !r.finished() && now-r.lastRecv >= r.cfg.IdleTimeout {
		r.fail(ErrIdleTimeout)
	}
	if r.err != nil {
		r.emitReset(out)
		return Never
	}
	if r.ackNow || now >= r.ackAt {
		r.sendAck(now, out)
	}
	next := r.ackAt
	if r.started && !r.finished() {
		next = min(next, r.lastRecv+r.cfg.IdleTimeout)
	}
	return next
}

// finished reports that the whole stream arrived.
func (r *Receiver) finished() bool { return r.finSeen && r.contig == r.finLen }

func (r *Receiver) sendAck(now time.Duration, out func([]byte)) {
	m := &r.msg
	*m = Message{Transfer: r.cfg.Transfer, CumSeq: r.cumSeq, EchoTS: r.echoTS, RecvTS: r.recvTS, Limit: r.limit()}
	m.NRanges = min(r.seqs.n, MaxSACKRanges)
	for i := range m.NRanges {
		m.Ranges[i] = Range{uint32(r.seqs.s[i].start), uint32(r.seqs.s[i].end)}
	}
	b, _ := EncodeAck(r.scratch, m)
	out(b)
	r.pending, r.ackNow, r.ackAt, r.advertised = 0, false, Never, r.limit()
}

func (r *Receiver) emitReset(out func([]byte)) {
	if r.resetSent {
		return
	}
	r.resetSent = true
	out(encodeReset(r.scratch, r.cfg.Transfer, r.err))
}
