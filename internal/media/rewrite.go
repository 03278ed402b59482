package media

import "time"

// Rewriter makes the packets forwarded to one subscriber from one or several sources (simulcast
// layers, a stream with pauses and dropped layers) look like one continuous stream: sequence
// numbers without the holes strata made, timestamps that keep advancing across source switches, and
// VP8/VP9 picture ids and TL0PICIDX that continue. It decides; it does not write: Rewrite returns a
// Mapping, whose header fields the caller puts in the header it sends and whose payload fields
// (picture id, TL0PICIDX) it writes into its own copy of the payload when the mapping changes them.
// It allocates nothing. It is not safe for concurrent use: the down-track serialises it.
type Rewriter struct {
	clockRate uint32
	seq       counter
	pic       counter
	tl0       counter

	started  bool
	resync   bool
	tsOffset uint32
	lastTS   uint32
	lastAt   time.Duration
}

// Mapping records how one forwarded packet is rewritten, so a retransmission of the same input
// packet (from the cache) is rewritten identically.
type Mapping struct {
	InSeq, OutSeq uint16
	TSOffset      uint32
	PicID         uint16
	HasPicID      bool
	TL0           uint8
	HasTL0        bool
}

// Timestamp is the output timestamp of an input timestamp.
func (m *Mapping) Timestamp(in uint32) uint32 { return in + m.TSOffset }

// RewritesPayload reports whether WritePayload changes the payload (a picture id or TL0PICIDX to
// renumber): only then does the caller need a copy of it.
func (m *Mapping) RewritesPayload() bool { return m.HasPicID || m.HasTL0 }

// WritePayload writes the mapping's picture id and TL0PICIDX into payload, located by f.
func (m *Mapping) WritePayload(f *Flags, payload []byte) {
	if m.HasPicID {
		f.SetPictureID(payload, m.PicID)
	}
	if m.HasTL0 {
		f.SetTL0PicIdx(payload, m.TL0)
	}
}

// NewRewriter returns a rewriter for a stream with the given RTP clock rate.
func NewRewriter(clockRate uint32) *Rewriter {
	r := &Rewriter{}
	r.Init(clockRate)
	return r
}

// Init (re)initialises a Rewriter value in place.
func (r *Rewriter) Init(clockRate uint32) {
	if clockRate == 0 {
		clockRate = 90000
	}
	*r = Rewriter{clockRate: clockRate, seq: newCounter(16), pic: newCounter(15), tl0: newCounter(8)}
}

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

// Rewrite decides the output of a packet (located by h and f; payload is only read). ok is false
// when the packet is too old to be given a place in the output (a late packet from before a
// switch, or a dropped packet arriving again): drop it.
func (r *Rewriter) Rewrite(h *Header, f *Flags, payload []byte, now time.Duration) (Mapping, bool) {
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
	if ts := m.Timestamp(h.Timestamp); int32(ts-r.lastTS) > 0 {
		r.lastTS, r.lastAt = ts, now
	}
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
	return m, true
}

// Pad takes the sequence number of a packet strata adds to the output (a padding-only probe
// packet, sent on the stream itself so that the receiver's feedback about it names this stream),
// and the timestamp it should carry (the newest). The packets forwarded after it are numbered after
// it; late packets from before it keep their numbers. ok is false before the first packet.
func (r *Rewriter) Pad() (seq uint16, ts uint32, ok bool) {
	out, ok := r.seq.insert()
	return uint16(out), r.lastTS, ok
}
