package echotest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
)

// textPrefix is put before echoed text messages, as Janus's echotest does.
const textPrefix = "EchoTest here! You wrote: "

// codecPrefs are the codec choices a request can make for the next negotiation.
type codecPrefs struct {
	audio, video, profile string
}

// negotiate answers an offer, preparing one echo track per incoming audio or video m-line.
func (s *session) negotiate(ctx context.Context, jsep *plugin.JSEP) (*plugin.JSEP, error) {
	if jsep.Type != "offer" {
		return nil, &requestError{ErrInvalidSDP, fmt.Sprintf("Unexpected JSEP type %q: the echotest takes offers", jsep.Type)}
	}
	p, err := s.h.Peer(peer.WithoutNACKResponder()) // the down-tracks answer NACKs from the receivers' caches
	if err != nil {
		return nil, &requestError{ErrUnknown, "No PeerConnection: " + err.Error()}
	}
	s.mu.Lock()
	if s.peer != p {
		s.peer, s.batcher = p, p.Batcher()
		p.OnTrack(s.onTrack)
		p.OnDataChannel(echoDataChannel)
		go s.rembLoop(p)
	}
	prefs := s.prefs
	s.mu.Unlock()
	rids := media.OfferRIDs(jsep.SDP)
	prepare := peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		return s.prepareEcho(pc, p, prefs, rids, jsep.RIDOrder)
	})
	answer, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP}, prepare)
	if err != nil {
		return nil, &requestError{ErrInvalidSDP, "Error parsing offer: " + err.Error()}
	}
	return &plugin.JSEP{Type: "answer", SDP: answer.SDP}, nil
}

// prepareEcho runs between applying the offer and creating the answer: each new audio or video
// transceiver gets one codec (the client's first, or the one the request asked for), a receiver
// for what the browser sends on it, and a down-track that sends it back.
func (s *session) prepareEcho(pc *webrtc.PeerConnection, p *peer.Peer, prefs codecPrefs, rids map[string][]string, ridOrder string) error {
	for _, t := range pc.GetTransceivers() {
		kind := t.Kind()
		if (kind != webrtc.RTPCodecTypeAudio && kind != webrtc.RTPCodecTypeVideo) || t.Sender() != nil || t.Mid() == "" {
			continue
		}
		pref := prefs.audio
		if kind == webrtc.RTPCodecTypeVideo {
			pref = prefs.video
		}
		offered := t.Receiver().GetParameters()
		chosen, ok := chooseCodec(offered.Codecs, pref, prefs.profile)
		if !ok {
			continue
		}
		if err := t.SetCodecPreferences(media.WithRTX(chosen, offered.Codecs)); err != nil {
			return fmt.Errorf("codec preferences for mid %s: %w", t.Mid(), err)
		}
		st := s.newStream(p, t.Mid(), chosen, offered.HeaderExtensions, rids[t.Mid()], ridOrder)
		sender, err := pc.AddTrack(st.down)
		if err != nil {
			return fmt.Errorf("echo track for mid %s: %w", t.Mid(), err)
		}
		st.sender = sender
		s.mu.Lock()
		st.down.SetTarget(st.target(s.targets))
		st.down.SetPaused(!s.active(st.video))
		s.streams[t.Mid()] = st
		if st.video {
			s.videoCodec = codecName(chosen.MimeType)
		} else {
			s.audioCodec = codecName(chosen.MimeType)
		}
		s.mu.Unlock()
		st.down.Start()
		go st.readRTCP()
	}
	return nil
}

// newStream builds the receiver of one m-line (its keyframe requests go to the browser as PLI)
// and the stream that echoes it.
func (s *session) newStream(p *peer.Peer, mid string, chosen webrtc.RTPCodecParameters,
	exts []webrtc.RTPHeaderExtensionParameter, rids []string, ridOrder string,
) *echoStream {
	uris := map[string]int{}
	for _, e := range exts {
		uris[e.URI] = e.ID
	}
	recv := sfu.NewReceiver(sfu.ReceiverConfig{
		ID: mid, Codec: media.CodecByName(chosen.MimeType), Simulcast: len(rids) > 1,
		Extensions: sfu.ExtIDsFrom(uris), Batcher: s.batcher,
	}, p.RequestKeyframe)
	return newEchoStream(s, mid, chosen.RTPCodecCapability, recv, media.SimulcastLayers(rids, ridOrder))
}

// chooseCodec picks the codec (the client's order of preference) matching the requested name and
// profile; an unavailable request falls back to the client's first.
func chooseCodec(codecs []webrtc.RTPCodecParameters, name, profile string) (webrtc.RTPCodecParameters, bool) {
	if c, ok := media.PickCodec(codecs, []string{name}, profile); ok {
		return c, true
	}
	return media.PickCodec(codecs, nil, "")
}

func codecName(mime string) string {
	_, name, ok := strings.Cut(mime, "/")
	if !ok {
		name = mime
	}
	return strings.ToLower(name)
}

// onTrack feeds an incoming track (one per simulcast layer) into its m-line's receiver.
func (s *session) onTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	s.mu.Lock()
	var st *echoStream
	if s.peer != nil {
		for _, t := range s.peer.PC.GetTransceivers() {
			if t.Receiver() == receiver {
				st = s.streams[t.Mid()]
			}
		}
	}
	s.mu.Unlock()
	if st == nil {
		go discard(track)
		return
	}
	layer := st.layerOfTrack(track.RID())
	st.recv.SetLayerSSRC(layer, uint32(track.SSRC()))
	go st.forward(track, layer)
}

func discard(t *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := t.Read(buf); err != nil {
			return
		}
	}
}

// echoDataChannel answers every message: binary as it came, text with a prefix (as Janus).
func echoDataChannel(dc *webrtc.DataChannel) {
	dc.OnMessage(func(msg webrtc.DataChannelMessage) {
		if msg.IsString {
			_ = dc.SendText(textPrefix + string(msg.Data))
			return
		}
		_ = dc.Send(msg.Data)
	})
}

// rembLoop sends the bitrate cap to the browser every second while one is set (Janus does it when
// the browser sends its own REMB, which Chrome no longer does with transport-wide feedback).
func (s *session) rembLoop(p *peer.Peer) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.q.Context().Done():
			return
		case <-p.Closed():
			return
		case <-t.C:
			if b := s.bitrate.Load(); b > 0 {
				s.sendREMB(b)
			}
		}
	}
}

// sendREMB caps what the browser sends on each video m-line; zero lifts the cap (10 Mbit/s).
func (s *session) sendREMB(bitrate uint32) {
	if bitrate == 0 {
		bitrate = noLimit
	}
	s.mu.Lock()
	p := s.peer
	s.mu.Unlock()
	for _, st := range s.videoStreams() {
		if p != nil {
			p.CapBitrate(bitrate, st.sourceSSRCs()...)
		}
	}
}

func (s *session) videoStreams() []*echoStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*echoStream
	for _, st := range s.streams {
		if st.video {
			out = append(out, st)
		}
	}
	return out
}
