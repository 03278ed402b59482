package bwe

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/gcc"
)

// NewReceiveSide returns the interceptor of one PeerConnection, driving est.
func NewReceiveSide(est *gcc.Receiver) *ReceiveSide {
	return &ReceiveSide{est: est, start: time.Now()}
}

// ReceiveSide runs GCC's receive-side estimator over every RTP packet the remote peer sends and
// sends its estimate back as REMB when the estimator says one is due.
type ReceiveSide struct {
	interceptor.NoOp
	start  time.Time
	writer atomic.Pointer[interceptor.RTCPWriter]

	mu     sync.Mutex
	est    *gcc.Receiver
	unwrap cc.AbsSendTimeUnwrapper
	ssrcs  []uint32
	sent   uint64
}

// State is the estimator's snapshot.
func (r *ReceiveSide) State() cc.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.est.State()
}

// REMBCount is the number of REMB messages sent.
func (r *ReceiveSide) REMBCount() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent
}

// BindRTCPWriter keeps the writer REMB messages go out on.
func (r *ReceiveSide) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	r.writer.Store(&w)
	return w
}

// BindRemoteStream feeds the stream's packets to the estimator when it carries abs-send-time.
func (r *ReceiveSide) BindRemoteStream(info *interceptor.StreamInfo, reader interceptor.RTPReader) interceptor.RTPReader {
	var absID, twccID uint8
	for _, e := range info.RTPHeaderExtensions {
		switch e.URI {
		case sdp.ABSSendTimeURI:
			absID = uint8(e.ID)
		case TransportCCURI:
			twccID = uint8(e.ID)
		}
	}
	if absID == 0 {
		return reader
	}
	r.mu.Lock()
	r.ssrcs = append(r.ssrcs, info.SSRC)
	r.mu.Unlock()
	var seq cc.SeqUnwrapper
	return interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, attr, err := reader.Read(b, a)
		if err != nil {
			return n, attr, err
		}
		if attr == nil {
			attr = interceptor.Attributes{}
		}
		h, herr := attr.GetRTPHeader(b[:n])
		if herr == nil {
			r.onPacket(h, n, absID, twccID, &seq)
		}
		return n, attr, nil
	})
}

func (r *ReceiveSide) onPacket(h *rtp.Header, size int, absID, twccID uint8, seq *cc.SeqUnwrapper) {
	ext := h.GetExtension(absID)
	if len(ext) < 3 {
		return
	}
	abs := uint32(ext[0])<<16 | uint32(ext[1])<<8 | uint32(ext[2])
	number := h.SequenceNumber
	if t := h.GetExtension(twccID); twccID != 0 && len(t) >= 2 {
		number = uint16(t[0])<<8 | uint16(t[1]) // one sequence across streams, so gaps are losses
	}
	now := time.Since(r.start)
	r.mu.Lock()
	r.est.OnPacket(cc.ReceivedPacket{SeqNo: seq.Unwrap(number), SendTime: r.unwrap.Unwrap(abs), Arrival: now, Size: size})
	value, due := r.est.REMB(now)
	var ssrcs []uint32
	if due {
		ssrcs = append(ssrcs, r.ssrcs...)
		r.sent++
	}
	r.mu.Unlock()
	if !due {
		return
	}
	if w := r.writer.Load(); w != nil {
		_, _ = (*w).Write([]rtcp.Packet{&rtcp.ReceiverEstimatedMaximumBitrate{Bitrate: float32(value), SSRCs: ssrcs}}, nil)
	}
}
