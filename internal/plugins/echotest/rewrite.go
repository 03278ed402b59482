package echotest

import (
	"time"
)

// rewriter makes the packets forwarded from one or several source streams (simulcast layers, or one
// stream with pauses and dropped layers) look like one continuous stream: sequence numbers have no
// gaps strata made, timestamps keep advancing across source switches, and VP8 picture ids and
// TL0PICIDX continue. It rewrites in place and allocates nothing. The SSRC and payload type are set
// by the Pion track the packets are written to.
type rewriter struct {
	clockRate uint32

	started bool
	// resync makes the next forwarded packet re-anchor the offsets (a new source, or a resume).
	resync    bool
	seqOffset uint16
	tsOffset  uint32
	lastSeq   uint16 // last sequence number sent
	lastTS    uint32
	lastAt    time.Duration
	lastInSeq uint16 // newest input sequence number of the current source

	picStarted         bool
	picOffset, lastPic uint16
	tl0Offset, lastTL0 uint8
	picResync          bool
}

func newRewriter(clockRate uint32) rewriter {
	if clockRate == 0 {
		clockRate = 90000
	}
	return rewriter{clockRate: clockRate}
}

// switchSource marks a discontinuity: the next forwarded packet comes from another source, or after
// a pause.
func (r *rewriter) switchSource() {
	r.resync = true
	r.picResync = true
}

// skip accounts for a packet of the current source that is dropped (e.g. a temporal layer above the
// target), so its sequence number is not left as a hole the receiver would NACK.
func (r *rewriter) skip(v rtpView) {
	if !r.started || r.resync || !seqNewer(v.seq, r.lastInSeq) {
		return
	}
	r.seqOffset--
	r.lastInSeq = v.seq
}

// forward rewrites the RTP header (and VP8 descriptor, when info says where) of pkt in place.
func (r *rewriter) forward(pkt []byte, v rtpView, info *payloadInfo, now time.Duration) {
	if !r.started {
		r.started = true
		r.lastSeq, r.lastTS = v.seq-1, v.ts
		r.lastInSeq = v.seq - 1
	} else if r.resync {
		elapsed := now - r.lastAt
		step := uint32(elapsed.Seconds() * float64(r.clockRate))
		if step == 0 {
			step = 1
		}
		r.seqOffset = r.lastSeq + 1 - v.seq
		r.tsOffset = r.lastTS + step - v.ts
		r.lastInSeq = v.seq - 1
	}
	r.resync = false
	seq, ts := v.seq+r.seqOffset, v.ts+r.tsOffset
	setSeq(pkt, seq)
	setTS(pkt, ts)
	if seqNewer(v.seq, r.lastInSeq) {
		r.lastInSeq = v.seq
	}
	if seqNewer(seq, r.lastSeq) {
		r.lastSeq, r.lastTS, r.lastAt = seq, ts, now
	}
	if info != nil && info.hasPicture {
		r.rewriteVP8(pkt[v.payload:v.payloadEnd], info)
	}
}

// rewriteVP8 keeps picture ids (and TL0PICIDX) continuous across source switches.
func (r *rewriter) rewriteVP8(p []byte, info *payloadInfo) {
	mask := uint16(0x7f)
	if info.picID15 {
		mask = 0x7fff
	}
	var in uint16
	if info.picID15 {
		in = uint16(p[info.picID]&0x7f)<<8 | uint16(p[info.picID+1])
	} else {
		in = uint16(p[info.picID] & 0x7f)
	}
	var tl0 uint8
	if info.hasTL0Index {
		tl0 = p[info.tl0PicIdx]
	}
	if !r.picStarted {
		r.picStarted = true
		r.lastPic, r.lastTL0 = in, tl0
	} else if r.picResync {
		r.picOffset = (r.lastPic + 1 - in) & mask
		r.tl0Offset = r.lastTL0 + 1 - tl0
	}
	r.picResync = false
	out := (in + r.picOffset) & mask
	if info.picID15 {
		p[info.picID] = 0x80 | byte(out>>8)
		p[info.picID+1] = byte(out)
	} else {
		p[info.picID] = byte(out)
	}
	if (out-r.lastPic)&mask < mask/2 {
		r.lastPic = out
	}
	if info.hasTL0Index {
		outTL0 := tl0 + r.tl0Offset
		p[info.tl0PicIdx] = outTL0
		if outTL0-r.lastTL0 < 0x80 {
			r.lastTL0 = outTL0
		}
	}
}
