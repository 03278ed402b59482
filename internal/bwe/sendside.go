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
	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/cc"
)

// TransportCCURI is the RTP header extension carrying transport-wide sequence numbers.
const TransportCCURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

// FactoryFunc adapts a function to interceptor.Factory.
type FactoryFunc func(id string) (interceptor.Interceptor, error)

// NewInterceptor implements interceptor.Factory.
func (f FactoryFunc) NewInterceptor(id string) (interceptor.Interceptor, error) { return f(id) }

// Estimator is the thread-safe face of one PeerConnection's rate controller.
type Estimator struct {
	mu       sync.Mutex
	ctrl     cc.RateController
	feedback uint64
	onTarget func(cc.Bitrate)
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

// OnTargetChange installs a callback called (outside the lock) when the target rate changes. It
// runs on the interceptor's goroutines and must not write RTP on the same PeerConnection.
func (e *Estimator) OnTargetChange(f func(cc.Bitrate)) {
	e.mu.Lock()
	e.onTarget = f
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
	unwrap     seqUnwrapper // for feedback base sequence numbers
	sentUnwrap seqUnwrapper // for the numbers stamped on sent packets (assigned in order)
	results    []cc.PacketResult

	closeOnce sync.Once
	done      chan struct{}
}

// NewSendSide returns the interceptor of one PeerConnection, driving ctrl. tick is how often the
// controller's timers run (OnTick) without feedback.
func NewSendSide(ctrl cc.RateController, tick time.Duration) *SendSide {
	if tick <= 0 {
		tick = 50 * time.Millisecond
	}
	s := &SendSide{
		est:     &Estimator{ctrl: ctrl},
		start:   time.Now(),
		history: newSendHistory(),
		results: make([]cc.PacketResult, 0, 512),
		done:    make(chan struct{}),
	}
	go s.tickLoop(tick)
	return s
}

// Estimator is the thread-safe face of this interceptor's controller.
func (s *SendSide) Estimator() *Estimator { return s.est }

func (s *SendSide) now() time.Duration { return time.Since(s.start) }

func (s *SendSide) tickLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.withController(func(c cc.RateController) { c.OnTick(s.now()) })
		}
	}
}

// withController runs f under the estimator's lock and reports a changed target afterwards.
func (s *SendSide) withController(f func(cc.RateController)) {
	e := s.est
	e.mu.Lock()
	before := e.ctrl.TargetRate()
	f(e.ctrl)
	after := e.ctrl.TargetRate()
	cb := e.onTarget
	e.mu.Unlock()
	if cb != nil && after != before {
		cb(after)
	}
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
		size := h.MarshalSize() + len(payload)
		now := s.now()
		s.withController(func(c cc.RateController) {
			full := s.sentUnwrap.unwrap(seq)
			s.history.add(full, now, size)
			c.OnPacketSent(cc.SentPacket{SeqNo: full, SendTime: now, Size: size})
		})
		return writer.Write(h, payload, a)
	})
}

// BindRTCPReader reads TWCC feedback (and RTT from receiver reports) from the remote peer.
func (s *SendSide) BindRTCPReader(reader interceptor.RTCPReader) interceptor.RTCPReader {
	return interceptor.RTCPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, attr, err := reader.Read(b, a)
		if err != nil {
			return n, attr, err
		}
		if attr == nil {
			attr = interceptor.Attributes{}
		}
		pkts, perr := attr.GetRTCPPackets(b[:n])
		if perr != nil {
			return n, attr, nil // malformed RTCP is Pion's to report; the estimator ignores it
		}
		for _, p := range pkts {
			switch p := p.(type) {
			case *rtcp.TransportLayerCC:
				s.onFeedback(p)
			case *rtcp.ReceiverReport:
				s.onReports(p.Reports)
			case *rtcp.SenderReport:
				s.onReports(p.Reports)
			}
		}
		return n, attr, nil
	})
}

func (s *SendSide) onFeedback(fb *rtcp.TransportLayerCC) {
	now := s.now()
	s.withController(func(c cc.RateController) {
		s.results = decodeTWCC(s.results[:0], fb, &s.unwrap, s.history)
		s.est.feedback++
		if len(s.results) > 0 {
			c.OnFeedback(cc.Feedback{Now: now, Packets: s.results})
		}
	})
}

// onReports gives the controller the RTT from the first reception report about our streams.
func (s *SendSide) onReports(reports []rtcp.ReceptionReport) {
	for _, r := range reports {
		if rtt, ok := rttFromReport(time.Now(), r); ok {
			s.withController(func(c cc.RateController) { c.OnRTT(s.now(), rtt) })
			return
		}
	}
}

// Close stops the tick loop.
func (s *SendSide) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	return nil
}
