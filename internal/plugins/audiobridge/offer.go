package audiobridge

import (
	"context"
	"fmt"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
)

// generate_offer: the plugin offers one sendrecv audio m-line in the member's codec, the client
// answers in a configure. The media is built with the offer and attached once the answer is in.

// offer creates (or, for a session that has media, renews) the plugin's offer.
func (s *session) offer(m *member) (*plugin.JSEP, *Error) {
	ctx, cancel := context.WithTimeout(s.q.Context(), negotiateTimeout)
	defer cancel()
	p, err := s.h.Peer(peer.WithoutNACKResponder())
	if err != nil {
		return nil, errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	s.mu.Lock()
	if s.media != nil && !s.pluginOffered {
		s.mu.Unlock()
		return nil, errorf(ErrInvalidSDP, "generate_offer on a session the client offered")
	}
	s.pluginOffered = true
	fresh := s.media == nil && s.offered == nil
	s.mu.Unlock()
	var built *sessionMedia
	var opts []peer.NegotiateOption
	if fresh {
		opts = append(opts, peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
			md, err := s.offerMedia(pc, p, m)
			built = md
			return err
		}))
	}
	desc, err := p.Offer(ctx, opts...)
	if err != nil {
		if built != nil {
			built.close()
		}
		return nil, errorf(ErrUnknown, "Error creating the offer: %v", err)
	}
	if built != nil {
		s.mu.Lock()
		s.offered = built
		s.mu.Unlock()
	}
	return &plugin.JSEP{Type: "offer", SDP: desc.SDP}, nil
}

// offerMedia adds the audio transceiver of a plugin offer with its Receiver, LocalSource and
// DownTrack. The answer keeps the offer's payload type and extension ids (RFC 8829), so both are
// known now.
func (s *session) offerMedia(pc *webrtc.PeerConnection, p *peer.Peer, m *member) (*sessionMedia, error) {
	md := &sessionMedia{codec: m.codec}
	md.out = newMixOut(m.codec, 0, p.Batcher())
	capability := media.Capability(m.codec, "")
	md.down = sfu.NewDownTrack(md.out.src.Receiver(), sfu.DownTrackConfig{
		ID: "strata-mix", StreamID: "strata-audiobridge", Codec: capability, RespondNACK: true,
	})
	t, err := pc.AddTransceiverFromTrack(md.down, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv})
	if err != nil {
		return nil, fmt.Errorf("mix track: %w", err)
	}
	chosen, ok := media.PickCodec(t.Sender().GetParameters().Codecs, []string{m.codec.String()}, "")
	if !ok {
		return nil, fmt.Errorf("no %s to offer", m.codec)
	}
	if err := t.SetCodecPreferences([]webrtc.RTPCodecParameters{chosen}); err != nil {
		return nil, err
	}
	md.pt = uint8(chosen.PayloadType)
	uris := map[string]int{}
	if m.room.opts.AudioLevelExt {
		for _, e := range t.Sender().GetParameters().HeaderExtensions {
			uris[e.URI] = e.ID
		}
	}
	md.recv = newInputReceiver(m.codec, sfu.ExtIDsFrom(uris), p.Batcher())
	md.down.Start()
	go md.down.ReadRTCP(t.Sender())
	p.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { md.read(tr) })
	return md, nil
}

// takeAnswer applies the client's answer to the plugin's offer and attaches the media.
func (s *session) takeAnswer(m *member, jsep *plugin.JSEP) *Error {
	s.mu.Lock()
	offered, pluginOffered := s.offered, s.pluginOffered
	s.mu.Unlock()
	if !pluginOffered {
		return errorf(ErrInvalidSDP, "Received an answer when we didn't send an offer")
	}
	p, err := s.h.Peer()
	if err != nil {
		return errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	if err := p.SetAnswer(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: jsep.SDP}); err != nil {
		return errorf(ErrInvalidSDP, "Error parsing answer: %v", err)
	}
	if offered == nil {
		return nil // an answer to a renewed offer
	}
	s.mu.Lock()
	s.media, s.offered = offered, nil
	s.mu.Unlock()
	if err := m.attach(offered); err != nil {
		return errorf(ErrUnknown, "%v", err)
	}
	return nil
}
