package videoroom

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
)

// codecPrefs are the codecs a publish/configure request prefers.
type codecPrefs struct{ audio, video string }

// offeredLine is what strata needs from one m-line of a publisher's offer.
type offeredLine struct {
	mindex int
	media  string      // the m-line's media type: audio, video, application
	rids   []string    // simulcast rids strata receives, in the offer's order
	layers []ssrcLayer // SSRC simulcast layers, lowest first (ssrcsimulcast.go)
	hidden []uint32    // SSRCs strata receives itself, kept from Pion
	noRTX  bool        // answered without RTX (ridRTXUnsafe)
}

// describeOffer reads the m-line index and the simulcast (by RID or by SSRC) of each mid.
func describeOffer(s string) (map[string]offeredLine, error) {
	var parsed sdp.SessionDescription
	if err := parsed.Unmarshal([]byte(s)); err != nil {
		return nil, err
	}
	out := map[string]offeredLine{}
	for i, md := range parsed.MediaDescriptions {
		mid, _ := md.Attribute(sdp.AttrKeyMID)
		line := offeredLine{mindex: i, media: md.MediaName.Media, rids: media.SendRIDs(md)}
		line.noRTX = ridRTXUnsafe(md, line.rids)
		var err error
		if line.layers, line.hidden, err = ssrcSimulcast(md); err != nil {
			return nil, fmt.Errorf("m-line %d: %w", i, err)
		}
		out[mid] = line
	}
	if err := checkLayersUnique(parsed.MediaDescriptions, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ridRTXUnsafe reports whether an m-line of RID simulcast must be answered without RTX: Pion tells
// a layer's RTX stream from the layer by the repaired-rtp-stream-id extension only, and an RTX
// packet carrying the layer's RID instead makes Pion move the layer's track to the RTX stream (its
// media is then never read again). Pion's own NACK responder sends such packets for a publisher
// that marks its packets with RIDs; such publishers declare their RTX streams (a=ssrc-group:FID),
// as Firefox does too (its RTX would be safe, but the offer cannot tell), Chrome not. Without RTX
// a publisher resends lost packets on the layer's own stream, which Pion keeps reading.
func ridRTXUnsafe(md *sdp.MediaDescription, rids []string) bool {
	if len(rids) == 0 {
		return false
	}
	repairID := false
	for _, a := range md.Attributes {
		switch a.Key {
		case sdp.AttrKeySSRCGroup:
			if strings.HasPrefix(a.Value, sdp.SemanticTokenFlowIdentification+" ") {
				return true
			}
		case sdp.AttrKeyExtMap:
			repairID = repairID || strings.Contains(a.Value, sdp.SDESRepairRTPStreamIDURI)
		}
	}
	return !repairID
}

// negotiate answers a publisher's offer and sets up one receiver per new audio/video m-line.
func (pub *publisher) negotiate(ctx context.Context, jsep *plugin.JSEP, prefs codecPrefs) (*plugin.JSEP, *requestError) {
	lines, err := describeOffer(jsep.SDP)
	if err != nil {
		return nil, errorf(ErrInvalidSDP, "Error parsing offer: %v", err)
	}
	p, err := pub.s.h.Peer(pub.s.p.publisherPeerOptions()...)
	if err != nil {
		return nil, errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	pub.mu.Lock()
	if pub.peer != p {
		pub.peer = p
		p.OnTrack(pub.onTrack)
		p.OnDataChannel(func(dc *webrtc.DataChannel) {
			p.TrackDataChannel(dc)
			pub.onDataChannel(dc)
		})
		go pub.feedbackLoop(p)
	}
	pub.mu.Unlock()
	opts := pub.room.options()
	chosen := map[string]webrtc.RTPCodecParameters{}
	prepare := peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		for _, t := range pc.GetTransceivers() {
			if t.Mid() == "" || t.Sender() != nil && t.Sender().Track() != nil {
				continue
			}
			allowed, pref := opts.audioCodecs, prefs.audio
			if t.Kind() == webrtc.RTPCodecTypeVideo {
				allowed, pref = opts.videoCodecs, prefs.video
			} else if t.Kind() != webrtc.RTPCodecTypeAudio {
				continue
			}
			offered, order := t.Receiver().GetParameters().Codecs, codecOrder(allowed, pref)
			codec, ok := media.PickCodec(offered, order, "")
			if !ok || len(order) == 0 {
				continue
			}
			codecs := media.WithRTX(codec, offered)
			if lines[t.Mid()].noRTX {
				codecs = codecs[:1]
			}
			if err := t.SetCodecPreferences(codecs); err != nil {
				return fmt.Errorf("codec preferences for mid %s: %w", t.Mid(), err)
			}
			chosen[t.Mid()] = codec
		}
		return nil
	})
	answer, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offerForPion(jsep.SDP, lines)}, prepare)
	if err != nil {
		return nil, errorf(ErrInvalidSDP, "Error negotiating: %v", err)
	}
	pub.addStreams(p, lines, chosen, jsep.RIDOrder)
	pub.addDataStream(lines)
	return &plugin.JSEP{Type: "answer", SDP: answer.SDP}, nil
}

// codecOrder is the order in which a publisher's codecs are chosen: the one it prefers if the room
// allows it, then the room's.
func codecOrder(allowed []string, pref string) []string {
	if pref != "" && contains(allowed, strings.ToLower(pref)) {
		return append([]string{strings.ToLower(pref)}, allowed...)
	}
	return allowed
}

// addStreams creates a stream (and receiver) for each negotiated m-line strata does not know yet.
func (pub *publisher) addStreams(p *peer.Peer, lines map[string]offeredLine, chosen map[string]webrtc.RTPCodecParameters, ridOrder string) {
	for _, t := range p.PC.GetTransceivers() {
		mid := t.Mid()
		codec, ok := chosen[mid]
		if !ok || pub.stream(mid) != nil {
			continue
		}
		line := lines[mid]
		uris := map[string]int{}
		for _, e := range t.Receiver().GetParameters().HeaderExtensions {
			uris[e.URI] = e.ID
		}
		c := media.CodecByName(codec.MimeType)
		simulcast := len(line.rids) > 1 || len(line.layers) > 1
		st := &pubStream{
			mid: mid, mindex: line.mindex, kind: t.Kind().String(), codecName: c.String(), fmtp: codec.SDPFmtpLine, pt: uint8(codec.PayloadType),
			simulcast: simulcast, rids: media.SimulcastLayers(line.rids, ridOrder), layers: line.layers,
			svc: !simulcast && c.SVC(),
		}
		pub.mu.Lock()
		st.description = pub.descriptions[mid]
		pub.mu.Unlock()
		st.recv = sfu.NewReceiver(sfu.ReceiverConfig{
			ID: fmt.Sprintf("%d/%s", pub.id, mid), Codec: c, Simulcast: st.simulcast, Extensions: sfu.ExtIDsFrom(uris),
			AudioLevelPackets: pub.activePkts, Batcher: p.Batcher(),
		}, p.RequestKeyframe)
		if st.kind == "audio" && pub.room.options().audioLevelEvent {
			st.recv.OnAudioLevel(func(avg float64) { pub.audioLevel(st, avg) })
		}
		pub.mu.Lock()
		pub.streams = sortedMids(append(pub.streams, st))
		pub.mu.Unlock()
		if len(st.layers) > 1 {
			pub.receiveUpperLayers(p, t.Receiver(), st, uint8(codec.PayloadType))
		}
	}
}

// onTrack feeds an incoming track (one per simulcast layer) into its stream's receiver.
func (pub *publisher) onTrack(track *webrtc.TrackRemote, r *webrtc.RTPReceiver) {
	pub.mu.Lock()
	p := pub.peer
	pub.mu.Unlock()
	var st *pubStream
	if p != nil {
		for _, t := range p.PC.GetTransceivers() {
			if t.Receiver() == r {
				st = pub.stream(t.Mid())
			}
		}
	}
	layer, ok := 0, st != nil
	if ok {
		layer, ok = st.trackLayer(track)
	}
	if !ok {
		go discard(track)
		return
	}
	switch prev := st.startReading(layer, track); prev {
	case nil:
		st.recv.SetLayerSSRC(layer, uint32(track.SSRC()))
		go st.read(layer, track, nil)
	case track:
		// Pion fired OnTrack again for a track it now reads from another SSRC: a second stream
		// carrying the layer's RID. The reader already running reads it; a second one would race.
		rtx := strings.EqualFold(track.Codec().MimeType, webrtc.MimeTypeRTX)
		if !rtx {
			st.recv.SetLayerSSRC(layer, uint32(track.SSRC())) // the publisher restarted the layer
		}
		pub.s.log.Warn("a publisher stream's layer moved to another SSRC", "mid", st.mid, "layer", layer, "ssrc", uint32(track.SSRC()), "rtx", rtx)
	default:
		pub.s.log.Warn("a second track for a publisher stream's layer ignored", "mid", st.mid, "layer", layer, "ssrc", uint32(track.SSRC()))
		go discard(track)
	}
}

// trackLayer is the layer a track of the stream feeds; false for a RID the offer did not list.
func (st *pubStream) trackLayer(track *webrtc.TrackRemote) (int, bool) {
	if rid := track.RID(); rid != "" {
		layer, ok := st.rids[rid]
		return layer, ok
	}
	if layer, ok := st.ssrcLayer(uint32(track.SSRC())); ok {
		return layer, true // SSRC simulcast: Pion receives the base layer itself
	}
	return 0, true
}

// startReading makes track the reader of a layer unless the layer has one, which it returns.
func (st *pubStream) startReading(layer int, track *webrtc.TrackRemote) *webrtc.TrackRemote {
	st.mu.Lock()
	defer st.mu.Unlock()
	if prev := st.readers[layer]; prev != nil {
		return prev
	}
	st.readers[layer] = track
	return nil
}

// stopReading frees a layer whose reader's track ended.
func (st *pubStream) stopReading(layer int, track *webrtc.TrackRemote) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.readers[layer] == track {
		st.readers[layer] = nil
	}
}

// read feeds a track's packets into the stream's receiver as one layer until the track ends. src,
// when set, is the layer's second source (its RTX stream, ssrclayers.go).
func (st *pubStream) read(layer int, track *webrtc.TrackRemote, src *layerSources) {
	defer st.stopReading(layer, track)
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil {
			return
		}
		if src == nil {
			st.recv.WriteRTP(layer, buf[:n], sfu.Now())
			continue
		}
		src.mu.Lock()
		st.recv.WriteRTP(layer, buf[:n], sfu.Now())
		if n >= 4 {
			src.mediaWritten(uint16(buf[2])<<8 | uint16(buf[3]))
		}
		src.mu.Unlock()
		src.mediaStarted()
	}
}

func discard(t *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := t.Read(buf); err != nil {
			return
		}
	}
}

// feedbackLoop runs once a second while the publisher's PeerConnection lives: it caps the
// publisher's video bitrate with REMB (the room's or the publisher's bitrate) and asks for a
// keyframe when none came for fir_freq seconds.
func (pub *publisher) feedbackLoop(p *peer.Peer) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.Closed():
			return
		case <-pub.s.ctx.Done():
			return
		case <-t.C:
		}
		opts := pub.room.options()
		pub.mu.Lock()
		bitrate := pub.bitrate
		pub.mu.Unlock()
		if bitrate == 0 {
			bitrate = opts.bitrate
		}
		now := sfu.Now()
		var ssrcs []uint32
		for _, st := range pub.streamList() {
			if st.kind != "video" {
				continue
			}
			for l := 0; l < 3; l++ {
				ssrc := st.recv.LayerSSRC(l)
				if ssrc == 0 {
					continue
				}
				ssrcs = append(ssrcs, ssrc)
				last, ok := st.recv.LastKeyframe(l)
				if opts.firFreq > 0 && (!ok || now-last > time.Duration(opts.firFreq)*time.Second) {
					st.recv.RequestKeyframe(l, now)
				}
			}
		}
		if bitrate > 0 {
			p.CapBitrate(uint32(min(bitrate, math.MaxUint32)), ssrcs...)
		}
	}
}

// audioLevel turns the average level of a stream into talking/stopped-talking events.
func (pub *publisher) audioLevel(st *pubStream, avg float64) {
	pub.mu.Lock()
	threshold := pub.levelAvg
	pub.mu.Unlock()
	talking := avg < float64(threshold) // as Janus: a strict comparison of the float average
	st.mu.Lock()
	changed := st.talking != talking
	st.talking = talking
	st.mu.Unlock()
	if !changed {
		return
	}
	name := "stopped-talking"
	if talking {
		name = "talking"
	}
	ev := map[string]any{short: name, "room": pub.room.id, "id": pub.id, "mid": st.mid, "audio-level-dBov-avg": float32(avg)}
	if c := pub.s.p.cl; c != nil {
		c.announce(pub) // listparticipants' talking on the other nodes
	}
	pub.room.notify(ev, nil)
}

// mediaUp makes the publisher active and tells the room.
func (pub *publisher) mediaUp() {
	pub.mu.Lock()
	was := pub.active
	pub.active = true
	published := pub.publishedLocked()
	pub.mu.Unlock()
	if was || !published {
		return
	}
	pub.recordIfWanted()
	if c := pub.s.p.cl; c != nil {
		c.export(pub)
		c.announce(pub)
	}
	pub.room.notify(map[string]any{short: "event", "room": pub.room.id, "publishers": []map[string]any{pub.describe()}}, pub)
}
