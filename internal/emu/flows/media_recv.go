package flows

import (
	"context"
	"sync"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/bwe"
)

// udpIPHeaders is what the receiver adds to an RTP packet's size for its size on the wire.
const udpIPHeaders = 28

// mediaReceiver is the receiving half: it counts goodput and runs the controller's receive-side
// half, sending its reports back in RTCP.
type mediaReceiver struct {
	m     *Media
	est   *bwe.Estimator // the receive-side half shares its lock (see Start)
	first chan struct{}
	once  sync.Once

	mu      sync.Mutex
	ssrc    uint32
	arrived int // packets since the last report

	seen    seqWindow
	rtpSeq  cc.SeqUnwrapper
	ccSeq   cc.SeqUnwrapper
	absTime cc.AbsSendTimeUnwrapper
	hdr     rtp.Header
}

func newMediaReceiver(m *Media, est *bwe.Estimator) *mediaReceiver {
	return &mediaReceiver{m: m, est: est, first: make(chan struct{})}
}

// incoming is the receiver's track with the header extension ids it negotiated.
type incoming struct {
	track         *webrtc.TrackRemote
	receiver      *webrtc.RTPReceiver
	absID, twccID uint8
}

func newIncoming(t *webrtc.TrackRemote, r *webrtc.RTPReceiver) incoming {
	in := incoming{track: t, receiver: r}
	for _, e := range r.GetParameters().HeaderExtensions {
		switch e.URI {
		case sdp.ABSSendTimeURI:
			in.absID = uint8(e.ID)
		case sdp.TransportCCURI:
			in.twccID = uint8(e.ID)
		}
	}
	return in
}

// rtcpLoop reads the sender's RTCP until the PeerConnection closes: Pion's interceptors take the
// sender reports' timestamps from it, without which receiver reports carry no RTT.
func (r *mediaReceiver) rtcpLoop(in incoming) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := in.receiver.Read(buf); err != nil {
			return
		}
	}
}

// readLoop reads the track until its PeerConnection closes.
func (r *mediaReceiver) readLoop(in incoming) {
	r.mu.Lock()
	r.ssrc = uint32(in.track.SSRC())
	r.mu.Unlock()
	buf := make([]byte, 1500)
	for {
		n, _, err := in.track.Read(buf)
		if err != nil {
			return
		}
		r.onPacket(buf[:n], in)
	}
}

func (r *mediaReceiver) onPacket(b []byte, in incoming) {
	hlen, err := r.hdr.Unmarshal(b)
	if err != nil {
		return
	}
	payload := len(b) - hlen
	if r.hdr.Padding && payload > 0 {
		payload -= int(b[len(b)-1])
	}
	rtpSeq := r.rtpSeq.Unwrap(r.hdr.SequenceNumber)
	if r.seen.add(rtpSeq) && payload > 0 {
		r.m.env.Rec.Goodput(payload)
		r.once.Do(func() { close(r.first) })
	}
	rx := r.m.ctl.Rx
	if rx == nil {
		return
	}
	seq := rtpSeq
	if t := r.hdr.GetExtension(in.twccID); in.twccID != 0 && len(t) >= 2 {
		seq = r.ccSeq.Unwrap(uint16(t[0])<<8 | uint16(t[1])) // one sequence with the padding: gaps are losses
	}
	var send time.Duration
	if a := r.hdr.GetExtension(in.absID); in.absID != 0 && len(a) >= 3 {
		send = r.absTime.Unwrap(uint32(a[0])<<16 | uint32(a[1])<<8 | uint32(a[2]))
	}
	size := len(b) + udpIPHeaders + srtpTagSize
	r.est.With(func(now time.Duration, _ cc.RateController) {
		rx.OnPacket(cc.ReceivedPacket{SeqNo: seq, SendTime: send, Arrival: now, Size: size})
	})
	r.mu.Lock()
	r.arrived++
	r.mu.Unlock()
}

// reportLoop sends the receive-side half's report every feedback interval in which packets
// arrived, as the simulator's receiver does with its feedback.
func (r *mediaReceiver) reportLoop(ctx context.Context, pc *webrtc.PeerConnection) {
	rx := r.m.ctl.Rx
	if rx == nil {
		return
	}
	t := time.NewTicker(r.m.opts.feedback)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		arrived, ssrc := r.arrived, r.ssrc
		r.arrived = 0
		r.mu.Unlock()
		if arrived == 0 {
			continue
		}
		var pkt rtcp.Packet
		r.est.With(func(now time.Duration, _ cc.RateController) {
			if rep, ok := rx.Report(now); ok {
				pkt = reportPacket(rep, ssrc)
			}
		})
		if pkt != nil {
			_ = pc.WriteRTCP([]rtcp.Packet{pkt})
		}
	}
}

// seqWindow remembers which of the last 1024 sequence numbers arrived, to count a duplicated
// packet's payload once; anything older counts as a duplicate.
type seqWindow struct {
	bits    [16]uint64
	highest int64
	started bool
}

func (w *seqWindow) add(seq int64) (isNew bool) {
	const size = int64(len(w.bits) * 64)
	switch {
	case !w.started:
		w.started, w.highest = true, seq
	case seq > w.highest:
		for s := max(w.highest+1, seq-size+1); s <= seq; s++ {
			i, bit := w.pos(s)
			w.bits[i] &^= bit
		}
		w.highest = seq
	case seq <= w.highest-size:
		return false
	}
	i, bit := w.pos(seq)
	if w.bits[i]&bit != 0 {
		return false
	}
	w.bits[i] |= bit
	return true
}

// pos is seq's word and bit; unsigned, so numbers below the first one (reordering at the start)
// map consistently too.
func (w *seqWindow) pos(seq int64) (int, uint64) {
	u := uint64(seq)
	return int(u / 64 % uint64(len(w.bits))), 1 << (u % 64)
}
