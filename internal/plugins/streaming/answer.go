package streaming

import (
	"context"
	"fmt"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/source"
)

// A viewer normally gets strata's offer and answers with start (Janus's flow). WHEP clients offer
// instead (recvonly m-lines, docs/WHIP.md), so a watch that carries an offer is answered: the
// mountpoint's audio and video streams are put on the offer's m-lines of their kind, in order
// (data streams need a data channel the offer does not ask for, and are left out), and the viewer
// starts at once. A later watch with an offer from such a viewer is an ICE restart, answered too.

// clientStreams applies the offer to the viewer's PeerConnection and keeps the streams that fit
// its m-lines.
func (v *viewer) clientStreams(offer *plugin.JSEP, streams []*mpStream) ([]*mpStream, *Error) {
	if offer.Type != "offer" {
		return nil, errorf(ErrInvalid, "Unsupported SDP type '%s' (a viewer sends an offer or nothing)", offer.Type)
	}
	if err := v.peer.SetOffer(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		return nil, errorf(ErrInvalid, "Error applying the offer: %v", err)
	}
	v.mu.Lock()
	v.clientOffer = true
	v.mu.Unlock()
	free := map[string]int{}
	for _, tr := range v.peer.PC.GetTransceivers() {
		if d := tr.Direction(); tr.Sender() == nil && (d == webrtc.RTPTransceiverDirectionSendonly || d == webrtc.RTPTransceiverDirectionSendrecv) {
			free[tr.Kind().String()]++
		}
	}
	var out []*mpStream
	for _, st := range streams {
		kind := map[source.Kind]string{source.Audio: "audio", source.Video: "video"}[st.kind]
		if free[kind] > 0 {
			free[kind]--
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		return nil, errorf(ErrInvalidReq, "The offer has no receiving m-line for the mountpoint's streams")
	}
	return out, nil
}

// transceiver puts a down-track on the PeerConnection: a new sendonly m-line with the
// mountpoint's mid for strata's own offer, or the next free m-line of its kind from the client's
// offer (Pion's AddTrack takes it; its mid is the client's).
func (v *viewer) transceiver(track webrtc.TrackLocal, mid string) (*webrtc.RTPTransceiver, error) {
	v.mu.Lock()
	clientOffer := v.clientOffer
	v.mu.Unlock()
	pc := v.peer.PC
	if !clientOffer {
		tr, err := pc.AddTransceiverFromTrack(track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly})
		if err != nil {
			return nil, err
		}
		// The viewer sees the mountpoint's mids, as Janus offers them.
		return tr, tr.SetMid(mid)
	}
	sender, err := pc.AddTrack(track)
	if err != nil {
		return nil, err
	}
	for _, tr := range pc.GetTransceivers() {
		if tr.Sender() == sender {
			return tr, nil
		}
	}
	return nil, fmt.Errorf("no transceiver took the track")
}

// answerAndStart answers the client's offer and starts the viewer, as start would after an answer.
func (v *viewer) answerAndStart(ctx context.Context, tx string) *Error {
	desc, err := v.peer.AnswerOffer(ctx)
	if err != nil {
		return errorf(ErrUnknown, "Creating the answer: %v", err)
	}
	v.mu.Lock()
	v.started, v.paused = true, false
	v.mu.Unlock()
	v.applyPause()
	v.startOwn()
	v.s.push(tx, result("status", "starting"), &plugin.JSEP{Type: "answer", SDP: desc.SDP})
	return nil
}

// reanswer answers a new offer of a viewer that started with its own (an ICE restart).
func (v *viewer) reanswer(ctx context.Context, tx string, offer *plugin.JSEP) *Error {
	v.mu.Lock()
	clientOffer := v.clientOffer
	v.mu.Unlock()
	if !clientOffer {
		return errorf(ErrInvalidState, "Only a viewer that started with its own offer sends offers")
	}
	if offer.Type != "offer" {
		return errorf(ErrInvalid, "Unsupported SDP type '%s'", offer.Type)
	}
	desc, err := v.peer.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP})
	if err != nil {
		return errorf(ErrInvalid, "Error applying the offer: %v", err)
	}
	v.s.push(tx, result("status", "updating"), &plugin.JSEP{Type: "answer", SDP: desc.SDP})
	return nil
}
