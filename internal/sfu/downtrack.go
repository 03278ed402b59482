package sfu

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// ErrCodecNotNegotiated is returned by Bind when the subscriber did not accept the track's codec.
var ErrCodecNotNegotiated = errors.New("sfu: the subscriber did not negotiate the track's codec")

// historySize is how many forwarded packets a down-track remembers to answer NACKs (a power of two).
const historySize = 1024

// DownTrackConfig describes one forwarded track.
type DownTrackConfig struct {
	// ID and StreamID are the track id and msid stream id the subscriber sees.
	ID, StreamID string
	// Codec is what the track is offered as (the publisher's negotiated codec).
	Codec webrtc.RTPCodecCapability
	// RespondNACK makes the down-track answer the subscriber's NACKs from the receiver's cache
	// (over RTX when negotiated). Leave it off when the PeerConnection already runs Pion's NACK
	// responder, or packets would be sent twice.
	RespondNACK bool
	// OnLayerChange is called (on its own goroutine) when the forwarded layer changes.
	OnLayerChange func(current Layer)
}

// DownTrackStats counts what a down-track did.
type DownTrackStats struct {
	Packets, Bytes               uint64
	Dropped                      uint64 // layers above the target
	Switches                     uint64
	KeyframeRequests             uint64 // PLI/FIR from the subscriber
	NACKed, Retransmitted        uint64
	PaddingPackets, PaddingBytes uint64
	FractionLost                 float64 // newest receiver report
	Current, Target              Layer
}

// DownTrack forwards one published track to one subscriber. It is a webrtc.TrackLocal: add it to
// the subscriber's PeerConnection, then call Start.
type DownTrack struct {
	cfg   DownTrackConfig
	recv  *Receiver
	codec media.Codec
	video bool

	mu        sync.Mutex // guards what follows; held while a packet is selected, rewritten and written
	bound     bool
	writer    webrtc.TrackLocalWriter
	ssrc      uint32
	rtxSSRC   uint32
	pt, rtxPT uint8
	exts      ExtIDs
	sel       selector
	rw        media.Rewriter
	paused    bool
	resume    bool
	// lastMarker: the last packet forwarded ended a frame (padding may follow it).
	lastMarker bool
	hdr        rtp.Header
	extBuf     [8]rtp.Extension
	buf        [media.SlotSize]byte
	rtxBuf     [media.SlotSize + 2]byte
	history    [historySize]historyEntry
	rtxSeq     uint16
	current    Layer

	packets, bytes, dropped, switches atomic.Uint64
	kfRequests, nacked, retransmitted atomic.Uint64
	padPackets, padBytes              atomic.Uint64
	lossMu                            sync.Mutex
	lossSum                           float64
	lossReports                       int
	lastLoss                          float64
}

// historyEntry remembers how one output packet was made, when it was sent, and how often again.
type historyEntry struct {
	valid    bool
	layer    int8
	resends  uint8
	sentAt   time.Duration
	resentAt time.Duration
	m        media.Mapping
}

// NewDownTrack creates a down-track of recv. It is not forwarding until it is bound to a
// PeerConnection (AddTrack and negotiation) and added to the receiver with Start.
func NewDownTrack(recv *Receiver, cfg DownTrackConfig) *DownTrack {
	d := &DownTrack{cfg: cfg, recv: recv, codec: recv.Codec(), video: recv.Codec().IsVideo(), sel: newSelector(recv)}
	d.current = policy.NoLayer
	d.rw.Init(recv.Codec().ClockRate(), 0)
	return d
}

// Receiver returns the track this down-track forwards.
func (d *DownTrack) Receiver() *Receiver {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.recv
}

// Start begins forwarding (the receiver fans packets out to d).
func (d *DownTrack) Start() { d.Receiver().AddDownTrack(d) }

// Stop ends forwarding.
func (d *DownTrack) Stop() { d.Receiver().RemoveDownTrack(d) }

// SetReceiver re-points the down-track to another published track with the same codec (Janus's
// switch): the subscriber keeps its m-line and sees one continuous stream, starting at the new
// source's next keyframe.
func (d *DownTrack) SetReceiver(r *Receiver) error {
	if r.Codec() != d.codec {
		return errors.New("sfu: switching to a track with another codec")
	}
	d.mu.Lock()
	old := d.recv
	target := d.sel.target()
	d.recv = r
	d.sel = newSelector(r)
	d.sel.setTarget(target)
	d.resume = true
	d.current = policy.NoLayer
	clear(d.history[:]) // sequence numbers of the old source mean nothing in the new one's cache
	d.mu.Unlock()
	old.RemoveDownTrack(d)
	r.AddDownTrack(d)
	r.RequestKeyframe(0, Now())
	return nil
}

// resync makes the next forwarded packet re-anchor the numbering (the source was muted).
func (d *DownTrack) resync() {
	d.mu.Lock()
	d.resume = true
	d.mu.Unlock()
}

func newSelector(recv *Receiver) selector {
	switch {
	case !recv.Codec().IsVideo():
		return &passSelector{want: Layer{}}
	case recv.Config().Simulcast || recv.Codec() == media.CodecVP8 || recv.Codec() == media.CodecH264:
		return newSimulcastSelector(recv.layerFlowing)
	default:
		return newSVCSelector()
	}
}

// ID, RID, StreamID and Kind implement webrtc.TrackLocal.
func (d *DownTrack) ID() string       { return d.cfg.ID }
func (d *DownTrack) RID() string      { return "" }
func (d *DownTrack) StreamID() string { return d.cfg.StreamID }
func (d *DownTrack) Kind() webrtc.RTPCodecType {
	if d.video {
		return webrtc.RTPCodecTypeVideo
	}
	return webrtc.RTPCodecTypeAudio
}

// Bind implements webrtc.TrackLocal: it picks the subscriber's payload types and extension ids.
func (d *DownTrack) Bind(ctx webrtc.TrackLocalContext) (webrtc.RTPCodecParameters, error) {
	codec, ok := matchCodec(d.cfg.Codec, ctx.CodecParameters())
	if !ok {
		return webrtc.RTPCodecParameters{}, ErrCodecNotNegotiated
	}
	uris := map[string]int{}
	for _, e := range ctx.HeaderExtensions() {
		uris[e.URI] = e.ID
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bound, d.writer = true, ctx.WriteStream()
	d.ssrc, d.rtxSSRC = uint32(ctx.SSRC()), uint32(ctx.SSRCRetransmission())
	d.pt, d.rtxPT = uint8(codec.PayloadType), rtxPayloadType(codec.PayloadType, ctx.CodecParameters())
	if d.rtxPT == 0 {
		d.rtxSSRC = 0
	}
	d.exts = ExtIDsFrom(uris)
	d.rw.SetSSRC(d.ssrc)
	return codec, nil
}

// Unbind implements webrtc.TrackLocal.
func (d *DownTrack) Unbind(webrtc.TrackLocalContext) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bound, d.writer = false, nil
	return nil
}

// matchCodec finds the subscriber's payload type for the codec: same MIME type and, for H.264 and
// VP9, the same profile.
func matchCodec(want webrtc.RTPCodecCapability, have []webrtc.RTPCodecParameters) (webrtc.RTPCodecParameters, bool) {
	var fallback *webrtc.RTPCodecParameters
	for i := range have {
		c := &have[i]
		if !strings.EqualFold(c.MimeType, want.MimeType) {
			continue
		}
		if fmtpParam(c.SDPFmtpLine, "profile-level-id") == fmtpParam(want.SDPFmtpLine, "profile-level-id") &&
			fmtpParam(c.SDPFmtpLine, "profile-id") == fmtpParam(want.SDPFmtpLine, "profile-id") {
			return *c, true
		}
		if fallback == nil {
			fallback = c
		}
	}
	if fallback != nil {
		return *fallback, true
	}
	return webrtc.RTPCodecParameters{}, false
}

func rtxPayloadType(pt webrtc.PayloadType, codecs []webrtc.RTPCodecParameters) uint8 {
	for _, c := range codecs {
		if strings.EqualFold(c.MimeType, webrtc.MimeTypeRTX) && fmtpParam(c.SDPFmtpLine, "apt") == itoa(int(pt)) {
			return uint8(c.PayloadType)
		}
	}
	return 0
}

func fmtpParam(fmtp, key string) string {
	for p := range strings.SplitSeq(fmtp, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, key) {
			return strings.ToLower(v)
		}
	}
	return ""
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var b [8]byte
	i := len(b)
	for ; v > 0; v /= 10 {
		i--
		b[i] = byte('0' + v%10)
	}
	return string(b[i:])
}

// SetTarget sets the layer the down-track should forward (the allocator's decision). NoLayer
// stops forwarding (the allocator pauses a video the path cannot carry); forwarding resumes, at a
// keyframe and with the numbering re-anchored, once a layer is set again.
func (d *DownTrack) SetTarget(l Layer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l.Spatial < 0 && d.sel.target().Spatial >= 0 && d.video {
		// A fresh selector waits for (and asks for) a keyframe when a layer is set again, and the
		// rewriter continues the numbering from the last packet sent rather than leaving a hole
		// the size of the pause.
		d.sel = newSelector(d.recv)
		d.resume = true
		d.current = policy.NoLayer
	}
	d.sel.setTarget(l)
}

// Target and Current return the wanted and the forwarded layer.
func (d *DownTrack) Target() Layer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sel.target()
}

// Current returns the layer being forwarded (NoLayer before the first keyframe).
func (d *DownTrack) Current() Layer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.current
}

// SetPaused stops (or resumes) forwarding without renegotiation (Janus's pause/start).
func (d *DownTrack) SetPaused(paused bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paused && !paused {
		d.resume = true
	}
	d.paused = paused
}

// Paused reports whether forwarding is paused.
func (d *DownTrack) Paused() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.paused
}

// SSRC is the SSRC the subscriber receives the track on (0 before negotiation).
func (d *DownTrack) SSRC() uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ssrc
}

// HasRTX reports whether RTX was negotiated (padding and retransmissions go there).
func (d *DownTrack) HasRTX() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bound && d.rtxSSRC != 0
}

// writeRTP is the per-packet path, called by the receiver for every packet of every layer.
func (d *DownTrack) writeRTP(from *Receiver, layer int, pkt []byte, h *media.Header, f *media.Flags, now time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.bound || d.paused || from != d.recv {
		return
	}
	dec := d.sel.selectPacket(layer, *f, now)
	if dec.keyframeLayer >= 0 {
		d.recv.RequestKeyframe(dec.keyframeLayer, now)
	}
	if dec.changed {
		d.layerChanged()
	}
	if !dec.forward {
		if dec.drop != dropOther {
			d.dropped.Add(1)
			// A dropped VP8 picture gives up its picture id, so the subscriber sees no gap. VP9
			// pictures keep theirs: VP9 frames name their references by picture-id difference
			// (P_DIFF, RFC 9628 §4.2), which renumbering would break.
			wholePicture := dec.drop == dropPicture && d.codec != media.CodecVP9
			d.rw.Drop(h, f, pkt[h.PayloadStart:h.PayloadEnd], wholePicture)
		}
		return
	}
	if dec.switched || d.resume {
		d.rw.Switch()
		d.resume = false
	}
	if len(pkt) > len(d.buf) {
		return
	}
	b := d.buf[:copy(d.buf[:], pkt)]
	m, ok := d.rw.Rewrite(b, h, f, now)
	if !ok {
		return
	}
	if dec.setMarker {
		media.SetMarker(b, true)
	}
	d.lastMarker = b[1]&0x80 != 0
	d.history[m.OutSeq&(historySize-1)] = historyEntry{valid: true, layer: int8(layer), m: m, sentAt: now}
	d.write(b, h, d.ssrc, d.pt, m.OutSeq, b[h.PayloadStart:h.PayloadEnd])
}

// layerChanged records a switch and tells the owner (without blocking the media path).
func (d *DownTrack) layerChanged() {
	cur := d.sel.current()
	if cur == d.current {
		return
	}
	d.current = cur
	d.switches.Add(1)
	if cb := d.cfg.OnLayerChange; cb != nil {
		go cb(cur)
	}
}

// write sends a rewritten packet: marker, timestamp and extensions from b (the extensions under the
// subscriber's ids), the given SSRC, payload type, sequence number and payload. Called with mu held.
func (d *DownTrack) write(b []byte, h *media.Header, ssrc uint32, pt uint8, seq uint16, payload []byte) {
	d.hdr = rtp.Header{
		Version: 2, Marker: b[1]&0x80 != 0, PayloadType: pt, SequenceNumber: seq,
		Timestamp: uint32(b[4])<<24 | uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7]),
		SSRC:      ssrc, Extensions: d.extBuf[:0],
	}
	d.copyExtensions(b, h)
	if _, err := d.writer.WriteRTP(&d.hdr, payload); err == nil {
		d.packets.Add(1)
		d.bytes.Add(uint64(len(b)))
	}
}

// copyExtensions carries the extensions the subscriber negotiated too, under its ids.
func (d *DownTrack) copyExtensions(b []byte, h *media.Header) {
	src := d.recv.cfg.Extensions // d.mu is held
	pairs := [...][2]uint8{
		{src.AudioLevel, d.exts.AudioLevel},
		{src.DependencyDescriptor, d.exts.DependencyDescriptor},
		{src.VideoOrientation, d.exts.VideoOrientation},
	}
	for _, p := range pairs {
		if p[0] == 0 || p[1] == 0 {
			continue
		}
		v := h.Extension(b, p[0])
		if v == nil {
			continue
		}
		if len(v) > 16 || p[1] > 14 {
			_ = d.hdr.SetExtensionWithProfile(p[1], v, rtp.ExtensionProfileTwoByte)
		} else {
			_ = d.hdr.SetExtension(p[1], v)
		}
	}
}

// Stats returns the counters.
func (d *DownTrack) Stats() DownTrackStats {
	d.lossMu.Lock()
	loss := d.lastLoss
	d.lossMu.Unlock()
	d.mu.Lock()
	cur, target := d.current, d.sel.target()
	d.mu.Unlock()
	return DownTrackStats{
		Packets: d.packets.Load(), Bytes: d.bytes.Load(), Dropped: d.dropped.Load(), Switches: d.switches.Load(),
		KeyframeRequests: d.kfRequests.Load(), NACKed: d.nacked.Load(), Retransmitted: d.retransmitted.Load(),
		PaddingPackets: d.padPackets.Load(), PaddingBytes: d.padBytes.Load(), FractionLost: loss,
		Current: cur, Target: target,
	}
}
