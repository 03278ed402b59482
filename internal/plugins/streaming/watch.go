package streaming

import (
	"context"
	"fmt"
	"slices"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/source"
)

// watch handles `watch`: a new viewer gets an offer with the mountpoint's streams (strata
// offers, the client answers with start); a viewer already watching gets a new offer (restart:
// with new ICE credentials), "updating". A watch with the client's offer is answered (answer.go).
func (s *session) watch(ctx context.Context, tx string, r *Watch, jsep *plugin.JSEP) *Error {
	if jsep != nil && jsep.SDP == "" {
		jsep = nil
	}
	mp := s.p.mountpoint(r.ID)
	if mp == nil {
		return NoSuchMountpoint(r.ID)
	}
	mp.mu.Lock()
	pin := mp.pin
	mp.mu.Unlock()
	if err := r.PIN.Check(pin); err != nil {
		return err
	}
	if v := s.viewer(); v != nil {
		if jsep != nil {
			return v.reanswer(ctx, tx, jsep)
		}
		return v.renegotiate(ctx, tx, mp, r.Restart)
	}
	if err := checkLayers(mp, r); err != nil {
		return err
	}
	chosen := chooseStreams(mp, r)
	if len(chosen) == 0 {
		return errorf(ErrInvalidReq, "Can't offer an SDP with no audio, video or data for this mountpoint")
	}
	// Another node's mountpoint: its streams are imported here (once) before the viewer uses them.
	if err := s.p.cl.hold(ctx, mp); err != nil {
		return err
	}
	defer mp.unhold()
	v, err := s.newViewer(mp, chosen, r, jsep)
	if err != nil {
		return err
	}
	if jsep != nil {
		if err := v.answerAndStart(ctx, tx); err != nil {
			s.stopViewing(v)
			return err
		}
		return nil
	}
	offer, err := v.offer(ctx, false)
	if err != nil {
		s.stopViewing(v)
		return err
	}
	s.push(tx, result("status", "preparing"), offer)
	return nil
}

// checkLayers is Janus's check of the initial layers, made only when the mountpoint has a
// simulcast or SVC stream.
func checkLayers(mp *mountpoint, r *Watch) *Error {
	for _, st := range mp.streams {
		if st.simulcast {
			if err := r.CheckSimulcast(); err != nil {
				return err
			}
		}
		if st.svc {
			if err := r.CheckSVC(); err != nil {
				return err
			}
		}
	}
	return nil
}

// chooseStreams picks the streams watch asks for: those in media (all when empty), less the
// kinds the deprecated offer_audio/offer_video/offer_data leave out.
func chooseStreams(mp *mountpoint, r *Watch) []*mpStream {
	off := map[source.Kind]*bool{source.Audio: r.OfferAudio, source.Video: r.OfferVideo, source.Data: r.OfferData}
	var out []*mpStream
	for _, st := range mp.streams {
		if len(r.Media) > 0 && !slices.Contains(r.Media, st.mid) {
			continue
		}
		if o := off[st.kind]; o != nil && !*o {
			continue
		}
		out = append(out, st)
	}
	return out
}

// newViewer builds the viewer's PeerConnection, allocator, down-tracks and data channels.
func (s *session) newViewer(mp *mountpoint, chosen []*mpStream, r *Watch, offer *plugin.JSEP) (*viewer, *Error) {
	v := &viewer{s: s, mp: mp}
	streams := chosen
	if !mp.live() {
		src, err := mp.perViewer()
		if err != nil {
			return nil, errorf(ErrUnknown, "Error opening the source (%v)", err)
		}
		v.own = src
		streams = ownStreams(mp, src, chosen)
	}
	p, err := s.h.Peer(s.p.viewerPeerOptions()...)
	if err != nil {
		v.close()
		return nil, errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	if rerr := v.attach(p); rerr != nil {
		v.close()
		return nil, rerr
	}
	s.mu.Lock()
	s.v = v
	s.mu.Unlock()
	if offer != nil {
		var rerr *Error
		if streams, rerr = v.clientStreams(offer, streams); rerr != nil {
			s.stopViewing(v)
			return nil, rerr
		}
	}
	for _, st := range streams {
		if rerr := v.addStream(st, initialMax(st, r)); rerr != nil {
			s.stopViewing(v)
			return nil, rerr
		}
	}
	if !mp.addViewer(s) {
		s.stopViewing(v)
		return nil, NoSuchMountpoint(mp.id)
	}
	return v, nil
}

// ownStreams describes an ondemand viewer's own source with the mountpoint's streams.
func ownStreams(mp *mountpoint, src source.Source, chosen []*mpStream) []*mpStream {
	var out []*mpStream
	for i, t := range src.Tracks() {
		if i >= len(mp.streams) || !slices.Contains(chosen, mp.streams[i]) {
			continue
		}
		d := mp.streams[i]
		out = append(out, &mpStream{kind: d.kind, mid: d.mid, label: d.label, msid: d.msid, codec: d.codec,
			codecName: d.codecName, pt: d.pt, fmtp: d.fmtp, recv: t.Recv})
	}
	return out
}

// offer creates the viewer's offer (restart: with new ICE credentials).
func (v *viewer) offer(ctx context.Context, restart bool) (*plugin.JSEP, *Error) {
	var opts []peer.NegotiateOption
	if restart {
		opts = append(opts, peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
			_, err := pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
			return err
		}))
	}
	desc, err := v.peer.Offer(ctx, opts...)
	if err != nil {
		return nil, errorf(ErrUnknown, "Creating the offer: %v", err)
	}
	return &plugin.JSEP{Type: "offer", SDP: desc.SDP}, nil
}

// renegotiate answers a watch of a viewer already watching: Janus's ICE restart or update.
func (v *viewer) renegotiate(ctx context.Context, tx string, mp *mountpoint, restart bool) *Error {
	cur := v.currentMountpoint()
	if cur != mp && !restart {
		return errorf(ErrInvalidState, "Already watching mountpoint %d", cur.id)
	}
	v.mu.Lock()
	up := v.up
	pending := v.peer.PC.SignalingState() == webrtc.SignalingStateHaveLocalOffer
	v.mu.Unlock()
	if !restart && !up {
		return errorf(ErrInvalidState, "Already watching mountpoint %d", cur.id)
	}
	if pending {
		return errorf(ErrInvalidState, "Already renegotiating mountpoint %d", cur.id)
	}
	offer, err := v.offer(ctx, restart)
	if err != nil {
		return err
	}
	v.s.push(tx, result("status", "updating"), offer)
	return nil
}

// capability is what a viewer is offered for a stream: its codec and fmtp.
func capability(st *mpStream) webrtc.RTPCodecCapability {
	return media.Capability(st.codec, st.fmtp)
}

// restrictCodecs offers only the stream's codec (and its RTX) on a viewer's m-line, with the
// payload types and feedback strata's media engine registered.
func restrictCodecs(tr *webrtc.RTPTransceiver, want webrtc.RTPCodecCapability) error {
	engine := tr.Sender().GetParameters().Codecs
	chosen, ok := media.MatchCodec(want, engine)
	if !ok {
		return fmt.Errorf("codec %s is not enabled in media.codecs", want.MimeType)
	}
	return tr.SetCodecPreferences(media.WithRTX(chosen, engine))
}
