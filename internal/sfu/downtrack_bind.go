package sfu

import (
	"errors"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/ring"
)

// ErrCodecNotNegotiated is returned by Bind when the subscriber did not accept the track's codec.
var ErrCodecNotNegotiated = errors.New("sfu: the subscriber did not negotiate the track's codec")

// destination is what negotiation decided about the subscriber's side of a down-track: where its
// packets are written and how they are labelled.
type destination struct {
	writer        webrtc.TrackLocalWriter
	ssrc, rtxSSRC uint32
	pt, rtxPT     uint8
	eventPT       int16 // the subscriber's payload type for DownTrackConfig.Events, -1 without
	exts          ExtIDs
	// nack: the down-track answers the subscriber's NACKs (RespondNACK, and NACK negotiated for the
	// codec), so it keeps a history of what it sent.
	nack bool
	// extMap pairs the publisher's id of each extension strata forwards with the subscriber's.
	extMap [3][2]uint8
}

// mapExtensions pairs the publisher's extension ids (src) with the subscriber's.
func (dst *destination) mapExtensions(src ExtIDs) {
	dst.extMap = [3][2]uint8{
		{src.AudioLevel, dst.exts.AudioLevel},
		{src.DependencyDescriptor, dst.exts.DependencyDescriptor},
		{src.VideoOrientation, dst.exts.VideoOrientation},
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
	codecs := ctx.CodecParameters()
	codec, ok := media.MatchCodec(d.cfg.Codec, codecs)
	if !ok {
		return webrtc.RTPCodecParameters{}, ErrCodecNotNegotiated
	}
	uris := map[string]int{}
	for _, e := range ctx.HeaderExtensions() {
		uris[e.URI] = e.ID
	}
	dst := destination{writer: ctx.WriteStream(), ssrc: uint32(ctx.SSRC()), pt: uint8(codec.PayloadType), eventPT: -1, exts: ExtIDsFrom(uris),
		nack: d.cfg.RespondNACK && negotiatedNACK(codec)}
	if d.cfg.Events != nil {
		if ev, ok := media.FindFormat(codecs, *d.cfg.Events); ok {
			dst.eventPT = int16(ev.PayloadType)
		}
	}
	if rtx, ok := media.RTXFor(codec.PayloadType, codecs); ok && ctx.SSRCRetransmission() != 0 {
		dst.rtxSSRC, dst.rtxPT = uint32(ctx.SSRCRetransmission()), uint8(rtx.PayloadType)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	dst.mapExtensions(d.recv.cfg.Extensions)
	d.bound, d.dst = true, dst
	if dst.nack && d.history.Len() == 0 {
		d.history = ring.NewWindow[historyEntry](historyMinLen, historyMaxLen, maxResendAge)
	}
	return codec, nil
}

// negotiatedNACK reports whether the codec's feedback includes generic NACK ("nack", not "nack pli").
func negotiatedNACK(c webrtc.RTPCodecParameters) bool {
	for _, fb := range c.RTCPFeedback {
		if fb.Type == webrtc.TypeRTCPFBNACK && fb.Parameter == "" {
			return true
		}
	}
	return false
}

// Unbind implements webrtc.TrackLocal.
func (d *DownTrack) Unbind(webrtc.TrackLocalContext) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bound, d.dst.writer = false, nil
	return nil
}
