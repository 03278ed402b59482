// Package bwe connects the pure controllers of package cc to Pion. The send-side interceptor
// stamps transport-wide sequence numbers on every outgoing RTP packet, remembers when each left and
// how big it was, and turns the TWCC feedback the remote peer sends into cc.Feedback for a rate
// controller: the estimate of the path towards that peer. The receive-side interceptor feeds
// received packets to a receiver estimator (GCC's draft receiver) and sends its value as REMB.
//
// The controllers never read a clock: this package is the one place where wall-clock time is read
// and handed to them.
package bwe

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/rtcpview"
	"github.com/strata-rtc/strata/internal/sched"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// TransportCCURI is the RTP header extension carrying transport-wide sequence numbers.
const TransportCCURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

// FactoryFunc adapts a function to interceptor.Factory.
type FactoryFunc func(id string) (interceptor.Interceptor, error)

// NewInterceptor implements interceptor.Factory.
func (f FactoryFunc) NewInterceptor(id string) (interceptor.Interceptor, error) { return f(id) }

// Estimator is the thread-safe face of one PeerConnection's rate controller.
type Estimator struct {
	mu           sync.Mutex
	ctrl         cc.RateController
	clock        func() time.Duration
	feedback     uint64
	lastFeedback time.Duration
	onUpdate     func()
	onEstimate   func(cc.Bitrate) // the metrics' observer, or nil; set before any feedback
	queue        queueTrend
	// unansweredSince is when the first packet sent after the last feedback left (valid while
	// unanswered is set).
	unansweredSince time.Duration
	unanswered      bool

	// The probe cluster being sent (0: none): every packet the interceptor sends is tagged with it
	// and counted, as libwebrtc's pacer tags what it sends during a cluster.
	probeID                  int
	probePackets, probeBytes int
}

// State is the controller's snapshot.
func (e *Estimator) State() cc.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ctrl.State()
}

// TargetRate is the controller's current estimate of the path.
func (e *Estimator) TargetRate() cc.Bitrate {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ctrl.TargetRate()
}

// FeedbackCount is the number of feedback packets processed.
func (e *Estimator) FeedbackCount() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.feedback
}

// OnUpdate installs a callback called (outside the lock) after every feedback message was
// processed, so that a consumer (the videoroom's allocator) can react at once rather than on its
// next timer. It runs on the interceptor's goroutines: it must not block, nor write RTP on the
// same PeerConnection.
func (e *Estimator) OnUpdate(f func()) {
	e.mu.Lock()
	e.onUpdate = f
	e.mu.Unlock()
}

// Path is a snapshot of every signal the estimator has about the path, taken under one lock: what
// the videoroom's allocator decides on (sfu.Estimator).
//
// Overload is the fast congestion signal (see queueTrend), with the rate at which the latest
// packets arrived; a verdict older than overloadTTL has expired: when nothing arrives any more
// (the sender stopped, or the path is dead) there is nothing to judge by. FeedbackLoss is the
// fraction lost of the packets sent in the last 750 ms that the feedback of the last 500 ms
// reported (0, and LossKnown false, when it reported fewer than ten), not the controller's last
// loss fraction, which can be seconds old when little is sent (a paused video being probed for).
// FeedbackAge is since the last feedback message (since the interceptor started, when none came);
// Unanswered since the first packet sent after it.
func (e *Estimator) Path() policy.Path {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock()
	st := e.ctrl.State()
	p := policy.Path{
		Estimate:    e.ctrl.TargetRate(),
		Received:    st.Received,
		Congested:   st.Usage == cc.Overuse,
		RTT:         time.Duration(st.RTTMs * float64(time.Millisecond)),
		FeedbackAge: now - e.lastFeedback,
	}
	if e.unanswered {
		p.Unanswered = now - e.unansweredSince
	}
	p.FeedbackLoss, p.LossKnown = e.queue.recentLoss(now)
	if now-e.queue.evaluatedAt <= overloadTTL {
		p.Overload, p.Delivered = e.queue.overload, e.queue.delivered
	}
	return p
}

// overloadTTL is how long an overload verdict stands without new feedback.
const overloadTTL = 500 * time.Millisecond

// NextProbe hands out the controller's next probe cluster, when it probes (cc.Prober): the
// caller sends it (BeginProbe, padding at its rate, EndProbe).
func (e *Estimator) NextProbe() (cc.ProbeCluster, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.ctrl.(cc.Prober)
	if !ok {
		return cc.ProbeCluster{}, false
	}
	return p.NextProbe(e.clock())
}

// RequestProbe asks the controller for a probe cluster at rate (cc.ProbeRequester; nothing
// happens when the controller does not probe or rate is not above its estimate).
func (e *Estimator) RequestProbe(rate cc.Bitrate) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.ctrl.(cc.ProbeRequester); ok {
		p.RequestProbe(e.clock(), rate)
	}
}

// BeginProbe tags every packet sent from now on with the cluster id, until EndProbe, so that their
// feedback reaches the controller's probe-result estimator.
func (e *Estimator) BeginProbe(id int) {
	e.mu.Lock()
	e.probeID, e.probePackets, e.probeBytes = id, 0, 0
	e.mu.Unlock()
}

// ProbeSent is what was sent since BeginProbe.
func (e *Estimator) ProbeSent() (packets, bytes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.probePackets, e.probeBytes
}

// EndProbe stops tagging packets.
func (e *Estimator) EndProbe() {
	e.mu.Lock()
	e.probeID = 0
	e.mu.Unlock()
}

// SendSide is the interceptor of one PeerConnection.
type SendSide struct {
	interceptor.NoOp
	est   *Estimator
	start time.Time
	seq   atomic.Uint32

	// Guarded by est.mu, like the controller they feed, so a packet takes one lock.
	history    *sendHistory
	unwrap     cc.SeqUnwrapper // for feedback base sequence numbers
	sentUnwrap cc.SeqUnwrapper // for the numbers stamped on sent packets (assigned in order)
	results    []cc.PacketResult

	ticker *sched.Timer
}

// NewSendSide returns the interceptor of one PeerConnection, driving ctrl. tick is how often the
// controller's timers run (OnTick) without feedback; they run on the process's shared loop
// (package sched), with every other PeerConnection's.
func NewSendSide(ctrl cc.RateController, tick time.Duration) *SendSide {
	if tick <= 0 {
		tick = 50 * time.Millisecond
	}
	s := &SendSide{
		est:     &Estimator{ctrl: ctrl},
		start:   time.Now(),
		history: newSendHistory(),
		// Grown by append to the largest feedback message (and kept): a 512-result array for
		// every PeerConnection was 28 kB, where an audio-only one needs a few results a message.
		results: make([]cc.PacketResult, 0, 16),
	}
	s.est.clock = s.now
	s.ticker = sched.Shared().Every(tick, s.onTick)
	return s
}

// Estimator is the thread-safe face of this interceptor's controller.
func (s *SendSide) Estimator() *Estimator { return s.est }

func (s *SendSide) now() time.Duration { return time.Since(s.start) }

func (s *SendSide) onTick() {
	s.withController(func(c cc.RateController) { c.OnTick(s.now()) })
}

// withController runs f under the estimator's lock.
func (s *SendSide) withController(f func(cc.RateController)) {
	s.est.mu.Lock()
	f(s.est.ctrl)
	s.est.mu.Unlock()
}

// BindLocalStream stamps a transport-wide sequence number on each packet of a stream that
// negotiated the extension, and records its send time and size.
func (s *SendSide) BindLocalStream(info *interceptor.StreamInfo, writer interceptor.RTPWriter) interceptor.RTPWriter {
	var extID uint8
	for _, e := range info.RTPHeaderExtensions {
		if e.URI == TransportCCURI {
			extID = uint8(e.ID)
		}
	}
	if extID == 0 {
		return writer
	}
	var ext [2]byte
	var mu sync.Mutex // a stream's writes are serial in Pion, but RTX and media may share a writer
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		seq := uint16(s.seq.Add(1) - 1)
		ext[0], ext[1] = byte(seq>>8), byte(seq)
		if err := h.SetExtension(extID, ext[:]); err != nil {
			return 0, err
		}
		// The header's size leaves out its padding: probe padding would count as 20-odd bytes.
		size := h.MarshalSize() + len(payload) + int(h.PaddingSize)
		now := s.now()
		s.withController(func(c cc.RateController) {
			full := s.sentUnwrap.Unwrap(seq)
			cluster := s.est.probeID
			if cluster != 0 {
				s.est.probePackets++
				s.est.probeBytes += size
			}
			if !s.est.unanswered {
				s.est.unanswered, s.est.unansweredSince = true, now
			}
			s.history.add(full, now, size, cluster)
			s.est.queue.onSent(now, size)
			c.OnPacketSent(cc.SentPacket{SeqNo: full, SendTime: now, Size: size, ProbeCluster: cluster})
		})
		return writer.Write(h, payload, a)
	})
}

// BindRTCPReader reads TWCC feedback (and RTT from receiver reports) from the remote peer. It reads
// the raw packets (internal/rtcpview) rather than Pion's unmarshalled ones: a subscriber's feedback
// describes every packet sent to it, and unmarshalling it allocated ~100 objects per message.
func (s *SendSide) BindRTCPReader(reader interceptor.RTCPReader) interceptor.RTCPReader {
	return interceptor.RTCPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, attr, err := reader.Read(b, a)
		if err != nil {
			return n, attr, err
		}
		s.readRTCP(b[:n])
		return n, attr, nil
	})
}

// readRTCP handles one compound packet; malformed parts are Pion's to report and are skipped here.
func (s *SendSide) readRTCP(b []byte) {
	it := rtcpview.Iterate(b)
	for p, ok := it.Next(); ok; p, ok = it.Next() {
		switch p.Kind() {
		case rtcpview.KindTWCC:
			if fb, err := rtcpview.ParseTWCC(p); err == nil {
				s.onFeedback(&fb)
			}
		case rtcpview.KindRR:
			if rr, err := rtcpview.ParseReceiverReport(p); err == nil {
				s.onReports(rr.Reports)
			}
		case rtcpview.KindSR:
			if sr, err := rtcpview.ParseSenderReport(p); err == nil {
				s.onReports(sr.Reports)
			}
		}
	}
}

func (s *SendSide) onFeedback(fb *rtcpview.TWCC) {
	now := s.now()
	s.withController(func(c cc.RateController) {
		s.results = decodeTWCC(s.results[:0], fb, &s.unwrap, s.history)
		s.est.feedback++
		s.est.lastFeedback, s.est.unanswered = now, false
		if len(s.results) > 0 {
			c.OnFeedback(cc.Feedback{Now: now, Packets: s.results})
			s.est.queue.onFeedback(now, s.results)
		}
	})
	s.est.mu.Lock()
	cb := s.est.onUpdate
	estimate := s.est.ctrl.TargetRate()
	s.est.mu.Unlock()
	if f := s.est.onEstimate; f != nil {
		f(estimate)
	}
	if cb != nil {
		cb()
	}
}

// onReports gives the controller the RTT from the first reception report about our streams.
func (s *SendSide) onReports(reports rtcpview.ReportBlocks) {
	for k := range reports.Len() {
		if rtt, ok := reports.At(k).RTT(time.Now()); ok {
			s.withController(func(c cc.RateController) { c.OnRTT(s.now(), rtt) })
			return
		}
	}
}

// Close stops the controller's timers.
func (s *SendSide) Close() error {
	s.ticker.Stop()
	return nil
}
