package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/rtcpview"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Stream is one track of a feed this node exports.
type Stream struct {
	Mid string
	// Codec is the publisher's negotiated format; PayloadType its payload type with the publisher:
	// packets of another payload type (telephone-event) do not cross.
	Codec       webrtc.RTPCodecCapability
	PayloadType uint8
	// Simulcast and Layers as the Receiver has them: Layers simulcast encodings, or 1.
	Simulcast bool
	Layers    int
	// RIDs name the layers (index = layer) when the publisher used RIDs.
	RIDs     []string
	Receiver *sfu.Receiver
	// Data, instead of Receiver, makes this a data stream (Mid is the publisher's application
	// m-line): its messages cross on a data channel of the link (data.go). Codec, PayloadType,
	// Simulcast, Layers and RIDs are unused then.
	Data *sfu.DataReceiver
}

// export is a feed this node offers, and the links it is sent on.
type export struct {
	desc    FeedDescriptor
	streams []Stream
	outs    map[*link]*feedOut // under Relay.mu
}

// Export offers a feed to the other nodes (replacing an export of the same id, whose importers are
// told it is gone). Nothing is sent until a node imports it.
func (r *Relay) Export(feedID string, streams []Stream) error {
	desc := FeedDescriptor{Feed: feedID}
	for _, s := range streams {
		if s.Data != nil && s.Receiver == nil {
			desc.Streams = append(desc.Streams, dataStreamDescriptor(s))
			continue
		}
		if s.Receiver == nil || s.Data != nil {
			return fmt.Errorf("%w: feed %q stream %q has no receiver, or two", ErrBadDescriptor, feedID, s.Mid)
		}
		layers := max(s.Layers, 1)
		desc.Streams = append(desc.Streams, StreamDescriptor{
			Mid: s.Mid, Kind: kindOf(s.Receiver.Codec()),
			Codec:     CodecDescriptor{MimeType: s.Codec.MimeType, ClockRate: s.Codec.ClockRate, Channels: s.Codec.Channels, Fmtp: s.Codec.SDPFmtpLine},
			Simulcast: s.Simulcast, Layers: layers, RIDs: s.RIDs,
			Extensions: linkExtensionIDs(s.Receiver.Config().Extensions),
		})
	}
	if err := desc.Validate(); err != nil {
		return err
	}
	for _, s := range streams {
		if s.Receiver != nil && codecOf(s.Codec.MimeType) != s.Receiver.Codec() {
			return fmt.Errorf("%w: feed %q stream %q: %s is not the receiver's %s", ErrBadDescriptor, feedID, s.Mid, s.Codec.MimeType, s.Receiver.Codec())
		}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	r.gen++
	desc.Generation = r.gen
	old := r.exports[feedID]
	r.exports[feedID] = &export{desc: desc, streams: streams, outs: map[*link]*feedOut{}}
	r.mu.Unlock()
	if old != nil {
		r.stopExport(old)
	}
	return nil
}

// Unexport withdraws a feed (its publisher left): it stops on every link, and every node that
// imported it is told it is gone.
func (r *Relay) Unexport(feedID string) {
	r.mu.Lock()
	e := r.exports[feedID]
	delete(r.exports, feedID)
	r.mu.Unlock()
	if e != nil {
		r.stopExport(e)
	}
}

// stopExport stops a withdrawn export's senders and tells its importers.
func (r *Relay) stopExport(e *export) {
	r.mu.Lock()
	outs := e.outs
	e.outs = map[*link]*feedOut{}
	r.mu.Unlock()
	for l, fo := range outs {
		fo.stop()
		go func(peer string) {
			ctx, cancel := context.WithTimeout(context.Background(), r.cfg.ConnectTimeout)
			defer cancel()
			req := feedRequest{Feed: e.desc.Feed, Generation: e.desc.Generation}
			if err := r.sig.Call(ctx, peer, pathGone, req, nil); err != nil {
				r.log.Debug("telling an edge a feed is gone", "peer", peer, "feed", e.desc.Feed, "err", err)
			}
		}(l.peer)
	}
}

// feedRequest names one export of a feed.
type feedRequest struct {
	Feed       string `json:"feed"`
	Generation uint64 `json:"generation,omitempty"`
}

// subscribeRequest carries the SSRCs the edge receives a feed on: per stream, per layer (none for
// a data stream); and the SCTP stream ids of the data channels it receives the data streams on,
// by mid (a data stream it leaves out is not sent).
type subscribeRequest struct {
	Feed       string            `json:"feed"`
	Generation uint64            `json:"generation"`
	SSRCs      [][]uint32        `json:"ssrcs"`
	Channels   map[string]uint16 `json:"channels,omitempty"`
}

func (r *Relay) handleDescribe(_ context.Context, from string, body json.RawMessage) (any, error) {
	var req feedRequest
	if err := decode(pathDescribe, body, &req); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.exports[req.Feed]
	if e == nil {
		return nil, fmt.Errorf("%w: %q on %s (asked by %s)", ErrNoFeed, req.Feed, r.cfg.NodeID, from)
	}
	return describeAnswer{Instance: r.instance, Descriptor: e.desc}, nil
}

// describeAnswer is the descriptor with the origin's instance (the edge replaces a link with an
// earlier run of the origin).
type describeAnswer struct {
	Instance   string         `json:"instance"`
	Descriptor FeedDescriptor `json:"descriptor"`
}

// handleSubscribe starts sending an export on the link with the asking node, on the SSRCs its
// receivers wait on.
func (r *Relay) handleSubscribe(ctx context.Context, from string, body json.RawMessage) (any, error) {
	var req subscribeRequest
	if err := decode(pathSubscribe, body, &req); err != nil {
		return nil, err
	}
	r.mu.Lock()
	l := r.links[from]
	r.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("relay: %s subscribed without a link", from)
	}
	if err := l.wait(ctx); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.exports[req.Feed]
	switch {
	case e == nil:
		return nil, fmt.Errorf("%w: %q on %s", ErrNoFeed, req.Feed, r.cfg.NodeID)
	case e.desc.Generation != req.Generation:
		return nil, fmt.Errorf("%w: %q", ErrGenerationGone, req.Feed)
	case e.outs[l] != nil:
		return struct{}{}, nil // a repeated request: it is already sent
	}
	if err := r.checkSSRCs(l, e, req.SSRCs); err != nil {
		return nil, err
	}
	if err := r.checkDataChannels(l, e, req.Channels); err != nil {
		return nil, err
	}
	fo, err := r.startOut(l, e, req.SSRCs)
	if err != nil {
		return nil, err
	}
	if err := r.startDataOut(fo, e, req.Channels); err != nil {
		fo.stop()
		return nil, err
	}
	e.outs[l] = fo
	return struct{}{}, nil
}

// checkSSRCs refuses SSRCs that do not fit the feed, are not the edge's to pick, or are already
// sent on the link. Called with r.mu held.
func (r *Relay) checkSSRCs(l *link, e *export, ssrcs [][]uint32) error {
	if len(ssrcs) != len(e.desc.Streams) {
		return fmt.Errorf("%w: %d SSRC lists for %d streams", ErrBadDescriptor, len(ssrcs), len(e.desc.Streams))
	}
	used := map[uint32]bool{}
	for _, other := range r.exports {
		if fo := other.outs[l]; fo != nil {
			for _, so := range fo.streams {
				for _, lo := range so.layers {
					used[lo.ssrc] = true
				}
			}
		}
	}
	for i, list := range ssrcs {
		if len(list) != e.desc.Streams[i].Layers {
			return fmt.Errorf("%w: %d SSRCs for the %d layers of %q", ErrBadDescriptor, len(list), e.desc.Streams[i].Layers, e.desc.Streams[i].Mid)
		}
		for _, s := range list {
			if !ownsSSRC(l.peer, r.cfg.NodeID, s) {
				return fmt.Errorf("%w: %d is not %s's to pick", ErrSSRCCollision, s, l.peer)
			}
			if used[s] {
				return fmt.Errorf("%w: %d", ErrSSRCCollision, s)
			}
			used[s] = true
		}
	}
	return nil
}

func (r *Relay) handleRelease(_ context.Context, from string, body json.RawMessage) (any, error) {
	var req feedRequest
	if err := decode(pathRelease, body, &req); err != nil {
		return nil, err
	}
	r.mu.Lock()
	var fo *feedOut
	if e, l := r.exports[req.Feed], r.links[from]; e != nil && l != nil && e.desc.Generation == req.Generation {
		fo = e.outs[l]
		delete(e.outs, l)
	}
	r.mu.Unlock()
	if fo != nil {
		fo.stop()
	}
	return struct{}{}, nil
}

// feedOut is one export sent on one link.
type feedOut struct {
	relay   *Relay
	link    *link
	streams []*streamOut
	data    []*dataOut
	dataIDs []uint16 // the data channels' SCTP stream ids
}

// streamOut is the Sink that sends one stream of an export on one link.
type streamOut struct {
	relay  *Relay
	recv   *sfu.Receiver
	pt     uint8      // the publisher's payload type
	linkPT uint8      // the link's
	exts   sfu.ExtIDs // the publisher's extension ids
	layers []*layerOut
}

// layerOut is one layer of a stream on a link: its sender, and the buffers its two writers (the
// layer's packets on the Receiver's goroutine, retransmissions on the RTCP reader's) build in.
type layerOut struct {
	ssrc   uint32
	sender *webrtc.RTPSender
	track  *linkTrack
	media  outBuffer
	resend outBuffer
	raw    [media.SlotSize]byte
}

type outBuffer struct {
	hdr rtp.Header
	ext [3]rtp.Extension
}

// startOut creates the senders of e on l and adds the sinks. Called with r.mu held.
func (r *Relay) startOut(l *link, e *export, ssrcs [][]uint32) (*feedOut, error) {
	fo := &feedOut{relay: r, link: l}
	for i, s := range e.streams {
		if s.Receiver == nil {
			continue // a data stream (startDataOut)
		}
		c := s.Receiver.Codec()
		so := &streamOut{relay: r, recv: s.Receiver, pt: s.PayloadType, linkPT: linkPT(c), exts: s.Receiver.Config().Extensions}
		fo.streams = append(fo.streams, so)
		for _, ssrc := range ssrcs[i] {
			lo := &layerOut{ssrc: ssrc, track: &linkTrack{id: e.desc.Feed + "/" + s.Mid, codec: c}}
			if l.plain != nil {
				so.layers = append(so.layers, lo)
				var w webrtc.TrackLocalWriter = &plainWriter{pl: l.plain}
				lo.track.writer.Store(&w)
				l.plain.addOut(ssrc, plainOut{so: so, layer: len(so.layers) - 1, lo: lo})
				continue
			}
			sender, err := r.api.NewRTPSender(lo.track, l.dtls)
			if err == nil {
				so.layers = append(so.layers, lo)
				lo.sender = sender
				err = sender.Send(webrtc.RTPSendParameters{Encodings: []webrtc.RTPEncodingParameters{{
					RTPCodingParameters: webrtc.RTPCodingParameters{SSRC: webrtc.SSRC(ssrc), PayloadType: webrtc.PayloadType(so.linkPT)},
				}}})
			}
			if err != nil {
				fo.stop()
				return nil, fmt.Errorf("relay: sending %s/%s to %s: %w", e.desc.Feed, s.Mid, l.peer, err)
			}
		}
	}
	for _, so := range fo.streams {
		for layer, lo := range so.layers {
			if lo.sender != nil {
				go so.readRTCP(layer, lo)
			}
		}
		so.recv.AddSink(so)
	}
	return fo, nil
}

// stop removes the sinks and stops the senders.
func (fo *feedOut) stop() {
	fo.stopData()
	for _, so := range fo.streams {
		so.recv.RemoveSink(so)
		for _, lo := range so.layers {
			if lo.sender != nil {
				_ = lo.sender.Stop()
			}
			if fo.link.plain != nil {
				fo.link.plain.remove(lo.ssrc)
			}
		}
	}
}

// WriteRTP implements sfu.Sink: the origin's per-packet path (nothing allocated).
func (so *streamOut) WriteRTP(p *sfu.Packet) {
	if p.Layer >= len(so.layers) || p.Header.PayloadType != so.pt {
		return
	}
	payload := p.Payload()
	if len(payload) == 0 {
		return // padding: the link carries media only
	}
	lo := so.layers[p.Layer]
	w := lo.track.writer.Load()
	if w == nil {
		return
	}
	hdr := lo.media.build(&p.Header, p.Bytes, so.exts, so.linkPT, lo.ssrc)
	if _, err := (*w).WriteRTP(hdr, payload); err == nil {
		so.relay.c.packetsSent.Add(1)
	}
}

// Resync implements sfu.Sink: the numbering crosses unchanged, so the edge's Receiver sees what
// the origin's did.
func (so *streamOut) Resync() {}

// build makes the link's header of a packet: the link's SSRC and payload type, the publisher's
// sequence number, timestamp and marker, and the extensions strata forwards under the link's ids
// (the Dependency Descriptor first: it may need two-byte elements, which then hold the others).
func (b *outBuffer) build(h *media.Header, pkt []byte, exts sfu.ExtIDs, pt uint8, ssrc uint32) *rtp.Header {
	b.hdr = rtp.Header{Version: 2, Marker: h.Marker, PayloadType: pt, SequenceNumber: h.Seq, Timestamp: h.Timestamp, SSRC: ssrc, Extensions: b.ext[:0]}
	copyExtension(&b.hdr, h, pkt, exts.DependencyDescriptor, linkExtensions.DependencyDescriptor)
	copyExtension(&b.hdr, h, pkt, exts.VideoOrientation, linkExtensions.VideoOrientation)
	copyExtension(&b.hdr, h, pkt, exts.AudioLevel, linkExtensions.AudioLevel)
	return &b.hdr
}

func copyExtension(hdr *rtp.Header, h *media.Header, pkt []byte, from, to uint8) {
	if from == 0 {
		return
	}
	v := h.Extension(pkt, from)
	if v == nil {
		return
	}
	if len(v) > 16 {
		_ = hdr.SetExtensionWithProfile(to, v, rtp.ExtensionProfileTwoByte)
	} else {
		_ = hdr.SetExtension(to, v)
	}
}

// readRTCP reads what the edge says about one layer until the sender stops: keyframe requests go
// to the origin Receiver (rate-limited per layer there, so the requests of every edge and local
// subscriber merge), NACKs are answered from its cache.
func (so *streamOut) readRTCP(layer int, lo *layerOut) {
	buf := make([]byte, 1500)
	for {
		n, _, err := lo.sender.Read(buf)
		if errors.Is(err, io.ErrShortBuffer) {
			continue
		}
		if err != nil {
			return
		}
		so.handleRTCP(layer, lo, buf[:n], sfu.Now())
	}
}

func (so *streamOut) handleRTCP(layer int, lo *layerOut, b []byte, now time.Duration) {
	it := rtcpview.Iterate(b)
	for p, ok := it.Next(); ok; p, ok = it.Next() {
		switch p.Kind() {
		case rtcpview.KindPLI, rtcpview.KindFIR:
			so.relay.c.keyframesRequested.Add(1)
			so.recv.RequestKeyframe(layer, now)
		case rtcpview.KindNACK:
			n, err := rtcpview.ParseNACK(p)
			if err != nil {
				continue
			}
			lost := n.Lost()
			for seq, ok := lost.Next(); ok; seq, ok = lost.Next() {
				so.relay.c.nacksReceived.Add(1)
				so.resend(layer, lo, seq)
			}
		}
	}
}

// resend sends a packet again from the origin Receiver's cache, on the layer's own SSRC with its
// own sequence number (the link has no RTX: nothing on it estimates bandwidth from it).
func (so *streamOut) resend(layer int, lo *layerOut, seq uint16) {
	n := so.recv.Cached(layer, seq, lo.raw[:])
	if n == 0 {
		return
	}
	pkt := lo.raw[:n]
	h, ok := media.ParseRTP(pkt)
	if !ok || h.PayloadType != so.pt {
		return
	}
	w := lo.track.writer.Load()
	if w == nil {
		return
	}
	hdr := lo.resend.build(&h, pkt, so.exts, so.linkPT, lo.ssrc)
	if _, err := (*w).WriteRTP(hdr, h.Payload(pkt)); err == nil {
		so.relay.c.retransmitted.Add(1)
		so.relay.c.packetsSent.Add(1)
	}
}

// linkTrack is the webrtc.TrackLocal of one layer on a link: it gives the streamOut the writer.
type linkTrack struct {
	id     string
	codec  media.Codec
	writer atomic.Pointer[webrtc.TrackLocalWriter]
}

func (t *linkTrack) ID() string       { return t.id }
func (t *linkTrack) RID() string      { return "" }
func (t *linkTrack) StreamID() string { return t.id }
func (t *linkTrack) Kind() webrtc.RTPCodecType {
	if t.codec.IsVideo() {
		return webrtc.RTPCodecTypeVideo
	}
	return webrtc.RTPCodecTypeAudio
}

func (t *linkTrack) Bind(ctx webrtc.TrackLocalContext) (webrtc.RTPCodecParameters, error) {
	for _, c := range ctx.CodecParameters() {
		if uint8(c.PayloadType) == linkPT(t.codec) {
			w := ctx.WriteStream()
			t.writer.Store(&w)
			return c, nil
		}
	}
	return webrtc.RTPCodecParameters{}, fmt.Errorf("%w: %s on the link", ErrUnknownCodec, t.codec)
}

func (t *linkTrack) Unbind(webrtc.TrackLocalContext) error {
	t.writer.Store(nil)
	return nil
}
