package sfu

import (
	"sync"
	"sync/atomic"
)

// Data channels through the media core: a DataReceiver per published data stream (a publisher's
// data channels, a streaming mountpoint's data source) hands each message to its DataSinks, one
// per subscriber data channel. The message is copied once into a pooled, reference-counted buffer
// shared by every sink; each sink sends it at once while its channel's SCTP send buffer is below
// BufferedHigh, else keeps it in its own bounded queue, which its channel's buffered-amount-low
// notification drains. A sink whose queue is full drops the message and counts it: a subscriber
// that does not read (its SCTP receive window full) loses messages itself and never stalls the
// publisher or the other subscribers.

// DataSinkConfig bounds what one subscriber's data channel may hold back. Defaults:
// configs/strata.yaml (plugins.videoroom.data_channels), DefaultDataSinkConfig.
type DataSinkConfig struct {
	// QueueMessages is how many messages a sink queues while its channel's send buffer is full.
	QueueMessages int `yaml:"queue_messages"`
	// QueueBytes bounds the bytes of those messages.
	QueueBytes int `yaml:"queue_bytes"`
	// BufferedHigh is the SCTP send buffer (bytes sent but not acknowledged) above which a sink
	// stops sending and queues; it sends again once the buffer drains to half of it.
	BufferedHigh uint64 `yaml:"buffered_high"`
}

// DefaultDataSinkConfig is the reference configuration's plugins.videoroom.data_channels.
func DefaultDataSinkConfig() DataSinkConfig {
	return DataSinkConfig{QueueMessages: 1024, QueueBytes: 1 << 20, BufferedHigh: 256 << 10}
}

// DataChannel is what a DataSink sends into: a subscriber's data channel (PionDataChannel).
type DataChannel interface {
	// Send sends one message; it must not keep msg after it returns.
	Send(msg []byte, binary bool) error
	// BufferedAmount is the bytes sent and not yet acknowledged by the peer.
	BufferedAmount() uint64
	Close() error
}

// maxPooledData keeps the rare huge message's buffer out of the pool.
const maxPooledData = 64 << 10

// dataMsg is one message shared by the sinks that hold it; the last to let go returns it to the pool.
type dataMsg struct {
	buf    []byte
	binary bool
	refs   atomic.Int32
}

var dataMsgPool = sync.Pool{New: func() any { return new(dataMsg) }}

func (m *dataMsg) release() {
	if m.refs.Add(-1) == 0 && cap(m.buf) <= maxPooledData {
		dataMsgPool.Put(m)
	}
}

// DataStats are a receiver's or a sink's message counts.
type DataStats struct {
	Messages, Bytes uint64
	// Dropped: messages a sink's full queue (or its closed channel) refused.
	Dropped uint64
	// Queued: messages a sink holds now.
	Queued int
	// Sinks: a receiver's sinks.
	Sinks int
}

// DataReceiver fans one data stream's messages out to its sinks. Write is called by one goroutine
// at a time (the publisher's SCTP reader); sinks come and go from any goroutine.
type DataReceiver struct {
	keepLast bool

	mu     sync.Mutex // serialises sink changes, Close and the kept message
	sinks  atomic.Pointer[[]*DataSink]
	closed bool
	last   *dataMsg // with keepLast: the latest message, given to each new sink

	messages, bytes atomic.Uint64
}

// NewDataReceiver makes a receiver. With keepLast the latest message is kept and sent to each sink
// when it is added (Janus streaming's databuffermsg).
func NewDataReceiver(keepLast bool) *DataReceiver {
	r := &DataReceiver{keepLast: keepLast}
	r.sinks.Store(&[]*DataSink{})
	return r
}

// Write hands one message to every sink; msg is not kept after it returns.
func (r *DataReceiver) Write(msg []byte, binary bool) {
	r.messages.Add(1)
	r.bytes.Add(uint64(len(msg)))
	sinks := *r.sinks.Load()
	if len(sinks) == 0 && !r.keepLast {
		return
	}
	m := dataMsgPool.Get().(*dataMsg)
	m.buf, m.binary = append(m.buf[:0], msg...), binary
	m.refs.Store(int32(len(sinks)) + 1) // one per sink, one for this call
	for _, s := range sinks {
		s.push(m)
	}
	if r.keepLast {
		r.keep(m)
		return
	}
	m.release()
}

// keep makes m (whose caller's reference it takes) the kept message.
func (r *DataReceiver) keep(m *dataMsg) {
	r.mu.Lock()
	old := r.last
	r.last = m
	r.mu.Unlock()
	if old != nil {
		old.release()
	}
}

// AddSink starts sending the receiver's messages to s; false once the receiver is closed.
func (r *DataReceiver) AddSink(s *DataSink) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	old := *r.sinks.Load()
	for _, x := range old {
		if x == s {
			return true
		}
	}
	next := append(append(make([]*DataSink, 0, len(old)+1), old...), s)
	r.sinks.Store(&next)
	if r.last != nil {
		r.last.refs.Add(1)
		s.push(r.last)
	}
	return true
}

// RemoveSink stops sending to s (which stays open: its owner closes it).
func (r *DataReceiver) RemoveSink(s *DataSink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.sinks.Load()
	next := make([]*DataSink, 0, len(old))
	for _, x := range old {
		if x != s {
			next = append(next, x)
		}
	}
	r.sinks.Store(&next)
}

// Close ends the stream: every sink is detached and closed (its channel too), and AddSink fails.
func (r *DataReceiver) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	sinks := *r.sinks.Load()
	r.sinks.Store(&[]*DataSink{})
	last := r.last
	r.last = nil
	r.mu.Unlock()
	if last != nil {
		last.release()
	}
	for _, s := range sinks {
		s.Close()
	}
}

// Stats counts the messages written.
func (r *DataReceiver) Stats() DataStats {
	return DataStats{Messages: r.messages.Load(), Bytes: r.bytes.Load(), Sinks: len(*r.sinks.Load())}
}

// DataSink is one subscriber data channel's share of a DataReceiver: a bounded queue in front of
// the channel's SCTP send buffer.
type DataSink struct {
	ch  DataChannel
	cfg DataSinkConfig

	mu     sync.Mutex // the queue, the state, and the order of sends
	ring   []*dataMsg
	head   int
	n      int
	qbytes int
	open   bool
	closed bool

	sent, sentBytes, dropped atomic.Uint64
}

// NewDataSink makes a sink sending into ch. It queues until Opened; the owner calls Drain when
// ch's buffered amount falls to cfg.BufferedHigh/2 (PionDataChannel wires both).
func NewDataSink(ch DataChannel, cfg DataSinkConfig) *DataSink {
	if cfg.QueueMessages < 1 {
		cfg.QueueMessages = 1
	}
	return &DataSink{ch: ch, cfg: cfg, ring: make([]*dataMsg, cfg.QueueMessages)}
}

// push sends m at once when nothing waits before it and the channel has room, else queues it, or
// drops it when the queue is full. It takes one of m's references.
func (s *DataSink) push(m *dataMsg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		s.dropped.Add(1)
		m.release()
	case s.open && s.n == 0 && s.ch.BufferedAmount() < s.cfg.BufferedHigh:
		s.send(m)
	case s.n == len(s.ring) || s.qbytes+len(m.buf) > s.cfg.QueueBytes && s.n > 0:
		s.dropped.Add(1)
		m.release()
	default:
		s.ring[(s.head+s.n)%len(s.ring)] = m
		s.n++
		s.qbytes += len(m.buf)
	}
}

// send writes m to the channel and lets go of it; s.mu is held.
func (s *DataSink) send(m *dataMsg) {
	if err := s.ch.Send(m.buf, m.binary); err != nil {
		s.dropped.Add(1)
	} else {
		s.sent.Add(1)
		s.sentBytes.Add(uint64(len(m.buf)))
	}
	m.release()
}

// Opened marks the channel open and sends what was queued before.
func (s *DataSink) Opened() {
	s.mu.Lock()
	s.open = true
	s.mu.Unlock()
	s.Drain()
}

// Drain sends queued messages while the channel's send buffer has room.
func (s *DataSink) Drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.open && !s.closed && s.n > 0 && s.ch.BufferedAmount() < s.cfg.BufferedHigh {
		m := s.ring[s.head]
		s.ring[s.head] = nil
		s.head = (s.head + 1) % len(s.ring)
		s.n--
		s.qbytes -= len(m.buf)
		s.send(m)
	}
}

// Close drops what is queued and closes the channel (idempotent). Detach the sink from its
// receiver first (DataReceiver.Close does both).
func (s *DataSink) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for ; s.n > 0; s.n-- {
		s.ring[s.head].release()
		s.ring[s.head] = nil
		s.head = (s.head + 1) % len(s.ring)
		s.dropped.Add(1)
	}
	s.qbytes = 0
	s.mu.Unlock()
	_ = s.ch.Close()
}

// Stats counts what the sink sent and dropped, and what it holds.
func (s *DataSink) Stats() DataStats {
	s.mu.Lock()
	queued := s.n
	s.mu.Unlock()
	return DataStats{Messages: s.sent.Load(), Bytes: s.sentBytes.Load(), Dropped: s.dropped.Load(), Queued: queued}
}
