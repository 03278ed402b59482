package media

import "time"

// Rewriter makes the packets forwarded to one subscriber from one or several sources (simulcast
// layers, a stream with pauses and dropped layers) look like one continuous stream: one SSRC,
// sequence numbers without the holes strata made, timestamps that keep advancing across source
// switches, and VP8/VP9 picture ids and TL0PICIDX that continue. It rewrites packets in place and
// allocates nothing. It is not safe for concurrent use: the down-track serialises it.
type Rewriter struct {
	clockRate uint32
	ssrc      uint32
	seq       counter
	pic       counter
	tl0       counter

	started  bool
	resync   bool
	tsOffset uint32
	lastTS   uint32
	lastAt   time.Duration
}

// Mapping records how one forwarded packet was rewritten, so a retransmission of the same input
// packet (from the cache) can be rewritten identically.
type Mapping struct {
	InSeq, OutSeq uint16
	TSOffset      uint32
	PicID         uint16
	HasPicID      bool
	TL0           uint8
	HasTL0        bool
}

// NewRewriter returns a rewriter for a stream with the given RTP clock rate, writing ssrc (0 leaves
// the SSRC alone).
func NewRewriter(clockRate, ssrc uint32) *Rewriter {
	r := &Rewriter{}
	r.Init(clockRate, ssrc)
	return r
}

// Init (re)initialises a Rewriter value in place.
func (r *Rewriter) Init(clockRate, ssrc uint32) {
	if clockRate == 0 {
		clockRate = 90000
	}
	*r = Rewriter{clockRate: clockRate, ssrc: ssrc, seq: newCounter(16), pic: newCounter(15), tl0: newCounter(8)}
}

// SetSSRC changes the SSRC written into packets.
func (r *Rewriter) SetSSRC(ssrc uint32) { r.ssrc = ssrc }

// Switch marks a discontinuity: the next forwarded packet comes from another source, or after a
// pause. It must start a frame the receiver can decode (a keyframe after a simulcast switch).
func (r *Rewriter) Switch() {
	r.resync = true
	r.seq.switchSource()
	r.pic.switchSource()
	r.tl0.switchSource()
}

// Drop accounts for a packet of the current source that is not forwarded (a layer above the
// target), so that it leaves no hole the receiver would ask for. wholePicture says the picture it
// belongs to is dropped entirely (a temporal layer), so its picture id goes too; when only some
// spatial layers of a picture are dropped the picture id stays.
func (r *Rewriter) Drop(h *Header, f *Flags, payload []byte, wholePicture bool) {
	r.seq.drop(uint32(h.Seq))
	if wholePicture {
		if id, ok := f.PictureID(payload); ok {
			r.pic.drop(uint32(id))
		}
	}
}

// Rewrite rewrites pkt (located by h and f) in place. ok is false when the packet is too old to be
// given a place in the output (a late packet from before a switch, or a dropped packet arriving
// again): drop it.
func (r *Rewriter) Rewrite(pkt []byte, h *Header, f *Flags, now time.Duration) (Mapping, bool) {
	seq, ok := r.seq.forward(uint32(h.Seq))
	if !ok {
		return Mapping{}, false
	}
	switch {
	case !r.started:
		r.started = true
		r.lastTS, r.lastAt = h.Timestamp, now
	case r.resync:
		step := uint32(max(now-r.lastAt, 0).Seconds() * float64(r.clockRate))
		r.tsOffset = r.lastTS + max(step, 1) - h.Timestamp
	}
	r.resync = false
	m := Mapping{InSeq: h.Seq, OutSeq: uint16(seq), TSOffset: r.tsOffset}
	ts := h.Timestamp + r.tsOffset
	if int32(ts-r.lastTS) > 0 {
		r.lastTS, r.lastAt = ts, now
	}
	payload := pkt[h.PayloadStart:h.PayloadEnd]
	if id, ok := f.PictureID(payload); ok {
		if out, ok := r.pic.forward(uint32(id)); ok {
			m.PicID, m.HasPicID = uint16(out), true
		}
	}
	if v, ok := f.TL0PicIdx(payload); ok {
		if out, ok := r.tl0.forward(uint32(v)); ok {
			m.TL0, m.HasTL0 = uint8(out), true
		}
	}
	r.Apply(pkt, h, f, m)
	return m, true
}

// Apply writes a mapping into pkt: used by Rewrite, and for retransmissions of a cached packet.
func (r *Rewriter) Apply(pkt []byte, h *Header, f *Flags, m Mapping) {
	SetSeq(pkt, m.OutSeq)
	SetTimestamp(pkt, h.Timestamp+m.TSOffset)
	if r.ssrc != 0 {
		SetSSRC(pkt, r.ssrc)
	}
	payload := pkt[h.PayloadStart:h.PayloadEnd]
	if m.HasPicID {
		f.SetPictureID(payload, m.PicID)
	}
	if m.HasTL0 {
		f.SetTL0PicIdx(payload, m.TL0)
	}
}

// Pad takes the sequence number of a packet strata adds to the output (a padding-only probe
// packet, sent on the stream itself so that the receiver's feedback about it names this stream),
// and the timestamp it should carry (the newest). The packets forwarded after it are numbered after
// it; late packets from before it keep their numbers. ok is false before the first packet.
func (r *Rewriter) Pad() (seq uint16, ts uint32, ok bool) {
	out, ok := r.seq.insert()
	return uint16(out), r.lastTS, ok
}

// LastTimestamp is the newest output timestamp and when it was written: padding and probe packets
// reuse it.
func (r *Rewriter) LastTimestamp() (uint32, time.Duration) { return r.lastTS, r.lastAt }

// LastSeq is the newest output sequence number (valid once a packet was forwarded).
func (r *Rewriter) LastSeq() uint16 { return uint16(r.seq.lastOut) }
