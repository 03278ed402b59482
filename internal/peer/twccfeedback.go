package peer

// Transport-wide congestion control feedback about the streams strata receives.
//
// A browser's send-side congestion control (GCC) reads from this feedback when each of its packets
// arrived. Pion's TWCC interceptor takes that time when the application reads the packet from its
// track, that is after the plugin has finished with the packets before it (an echo written back, a
// videoroom fan-out to every subscriber): the feedback then reports strata's own work as network
// delay, in bursts (a keyframe's packets wait for each other's fan-outs). Here the arrival time is
// taken when Pion's SRTP session hands the decrypted packet to its stream's buffer (the Peer's
// SettingEngine.BufferFactory), right after the socket, and kept by SSRC and RTP sequence number;
// the feedback interceptor looks it up when the packet is read, and Pion's twcc.Recorder builds the
// feedback packets from those times.

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/logging"
	"github.com/pion/rtcp"
	"github.com/pion/sdp/v3"
	"github.com/pion/transport/v4/packetio"

	"github.com/strata-rtc/strata/internal/sched"
)

// The limits of Pion's own SRTP and SRTCP stream buffers (pion/srtp's srtpBufferSize and
// srtcpBufferSize).
const (
	rtpBufferLimit  = 1000 * 1000
	rtcpBufferLimit = 100 * 1000
)

// stampSlots is how many arrival times a stream keeps: a packet is read long before 1024 more of
// its stream have arrived (~1.5 s of 720p video).
const stampSlots = 1024

// arrivals keeps the arrival times of one PeerConnection's incoming RTP packets.
type arrivals struct {
	start time.Time
	now   func() int64 // µs since start; tests replace it

	mu      sync.Mutex
	streams map[uint32]*stampRing
}

func newArrivals() *arrivals {
	a := &arrivals{start: time.Now(), streams: map[uint32]*stampRing{}}
	a.now = func() int64 { return time.Since(a.start).Microseconds() }
	return a
}

// bufferFactory is the Peer's SettingEngine.BufferFactory: Pion's own buffers, those of RTP
// streams stamping every packet written into them.
func (a *arrivals) bufferFactory(t packetio.BufferPacketType, ssrc uint32) io.ReadWriteCloser {
	b := packetio.NewBuffer()
	if t != packetio.RTPBufferPacket {
		b.SetLimitSize(rtcpBufferLimit)
		return b
	}
	b.SetLimitSize(rtpBufferLimit)
	ring := &stampRing{}
	a.mu.Lock()
	a.streams[ssrc] = ring
	a.mu.Unlock()
	return &stampedBuffer{Buffer: b, arrivals: a, ssrc: ssrc, ring: ring}
}

// ring returns the arrival times of stream ssrc, or nil before its buffer exists.
func (a *arrivals) ring(ssrc uint32) *stampRing {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streams[ssrc]
}

// stampedBuffer is a stream's buffer that records when each packet was written into it.
type stampedBuffer struct {
	*packetio.Buffer
	arrivals *arrivals
	ssrc     uint32
	ring     *stampRing
}

// Write stamps the packet before buffering it, so that its reader always finds the stamp. Pion's
// errors (packetio.ErrFull) are returned as they are: the SRTP session drops the packet on them.
func (b *stampedBuffer) Write(p []byte) (int, error) {
	if len(p) >= 4 {
		b.ring.put(binary.BigEndian.Uint16(p[2:4]), b.arrivals.now())
	}
	return b.Buffer.Write(p)
}

// Close forgets the stream's stamps (unless a newer buffer took the SSRC over) and clears them, so
// that a reader still holding the ring finds nothing there for the packets of a newer stream.
func (b *stampedBuffer) Close() error {
	a := b.arrivals
	a.mu.Lock()
	if a.streams[b.ssrc] == b.ring {
		delete(a.streams, b.ssrc)
	}
	a.mu.Unlock()
	b.ring.clear()
	return b.Buffer.Close()
}

// stampRing holds the arrival times of a stream's last stampSlots packets by RTP sequence number,
// each slot the sequence number (high 16 bits) and the time in µs plus one (0: empty). One
// goroutine writes (the SRTP session), another reads (the stream's reader): each slot is atomic.
type stampRing [stampSlots]atomic.Uint64

const stampTimeMask = 1<<48 - 1

func (r *stampRing) put(seq uint16, at int64) {
	r[seq%stampSlots].Store(uint64(seq)<<48 | (uint64(at+1) & stampTimeMask))
}

func (r *stampRing) clear() {
	for i := range r {
		r[i].Store(0)
	}
}

// get returns the arrival time of packet seq, if the ring still has it. A nil ring has nothing.
func (r *stampRing) get(seq uint16) (int64, bool) {
	if r == nil {
		return 0, false
	}
	v := r[seq%stampSlots].Load()
	if v == 0 || uint16(v>>48) != seq {
		return 0, false
	}
	return int64(v&stampTimeMask) - 1, true
}

// feedbackFactory builds the TWCC feedback interceptor of one PeerConnection.
type feedbackFactory struct {
	arrivals *arrivals
	interval time.Duration
	log      logging.LeveledLogger
}

func newFeedbackFactory(a *arrivals, interval time.Duration, lf logging.LoggerFactory) *feedbackFactory {
	return &feedbackFactory{arrivals: a, interval: interval, log: lf.NewLogger("twcc_feedback")}
}

func (f *feedbackFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	s := &feedbackSender{arrivals: f.arrivals, interval: f.interval, log: f.log, recorder: twcc.NewRecorder(rand.Uint32())}
	s.timer = sched.Shared().NewTimer(s.send)
	return s, nil
}

// feedbackSender records the transport-wide sequence number and arrival time of every packet
// received and sends feedback every interval once the first packet has arrived, on the process's
// shared loop (package sched) rather than a ticker and goroutine per PeerConnection.
type feedbackSender struct {
	interceptor.NoOp
	arrivals *arrivals
	interval time.Duration
	log      logging.LeveledLogger

	mu       sync.Mutex
	recorder *twcc.Recorder
	writer   interceptor.RTCPWriter // nil until bound
	started  bool                   // the timer runs (from the first packet recorded)
	closed   bool
	timer    *sched.Timer
}

// BindRTCPWriter keeps the PeerConnection's RTCP writer for the feedback.
func (s *feedbackSender) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	s.mu.Lock()
	s.writer = w
	s.mu.Unlock()
	return w
}

// BindRemoteStream records the packets of a stream that carries transport-wide sequence numbers.
func (s *feedbackSender) BindRemoteStream(info *interceptor.StreamInfo, reader interceptor.RTPReader) interceptor.RTPReader {
	var id uint8
	for _, e := range info.RTPHeaderExtensions {
		if e.URI == sdp.TransportCCURI && e.ID > 0 && e.ID < 256 {
			id = uint8(e.ID)
		}
	}
	if id == 0 {
		return reader
	}
	ssrc := info.SSRC
	ring := s.arrivals.ring(ssrc) // read by this stream's reader only
	return interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, attr, err := reader.Read(b, a)
		if err != nil {
			return n, attr, err
		}
		if attr == nil {
			attr = interceptor.Attributes{}
		}
		h, herr := attr.GetRTPHeader(b[:n])
		if herr != nil {
			return n, attr, nil
		}
		ext := h.GetExtension(id)
		if len(ext) < 2 {
			return n, attr, nil
		}
		at, ok := ring.get(h.SequenceNumber)
		if !ok {
			// The stream's buffer may have been replaced (or not exist yet): look again.
			if ring = s.arrivals.ring(ssrc); ring != nil {
				at, ok = ring.get(h.SequenceNumber)
			}
		}
		if !ok {
			at = s.arrivals.now() // not stamped (a buffer of someone else's): read time it is
		}
		s.record(ssrc, binary.BigEndian.Uint16(ext), at)
		return n, attr, nil
	})
}

func (s *feedbackSender) record(ssrc uint32, seq uint16, at int64) {
	s.mu.Lock()
	s.recorder.Record(ssrc, seq, at)
	if !s.started && !s.closed {
		s.started = true
		s.timer.Start(s.interval) // under s.mu: never after Close
	}
	s.mu.Unlock()
}

// build returns the feedback due now (none when nothing arrived since the last).
func (s *feedbackSender) build() []rtcp.Packet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recorder.BuildFeedbackPacket()
}

// send writes the feedback due, every interval.
func (s *feedbackSender) send() {
	s.mu.Lock()
	w, closed := s.writer, s.closed
	s.mu.Unlock()
	if closed || w == nil {
		return
	}
	pkts := s.build()
	if len(pkts) == 0 {
		return
	}
	if _, err := w.Write(pkts, nil); err != nil {
		s.log.Debugf("writing transport-wide feedback: %v", err)
		return
	}
	for _, p := range pkts {
		if fb, ok := p.(*rtcp.TransportLayerCC); ok {
			s.log.Tracef("transport-wide feedback #%d: base %d, %d statuses, %d received", fb.FbPktCount,
				fb.BaseSequenceNumber, fb.PacketStatusCount, len(fb.RecvDeltas))
		}
	}
}

// Close stops the feedback.
func (s *feedbackSender) Close() error {
	s.mu.Lock()
	s.closed = true
	s.timer.Stop()
	s.mu.Unlock()
	return nil
}
