package videoroom

import (
	"context"
	"fmt"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/plugin"
)

// A subscription normally starts with strata's offer (Janus's flow). WHEP clients offer instead
// (recvonly m-lines, docs/WHIP.md), so a join as subscriber that carries an offer is answered: the
// wanted streams are put on the offer's m-lines of their kind, in order, and the subscription is
// started at once. Such a subscription is never renegotiated by the server (its client expects no
// offers): a departed feed's m-lines fall silent, subscribe/update are refused, and an ICE restart
// comes as a new offer in configure.

// answerOffer applies the client's offer, adds the streams that fit its m-lines and answers.
func (sub *subscriber) answerOffer(ctx context.Context, jsep *plugin.JSEP, ws []wanted) (*plugin.JSEP, *requestError) {
	if jsep.Type != "offer" {
		return nil, errorf(ErrInvalidSDPType, "Unsupported SDP type '%s' (a subscriber sends an offer or nothing)", jsep.Type)
	}
	sub.mu.Lock()
	p := sub.peer
	sub.clientOffer, sub.autoupdate = true, false
	sub.mu.Unlock()
	if err := p.SetOffer(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP}); err != nil {
		return nil, errorf(ErrInvalidSDP, "Error applying the offer: %v", err)
	}
	free := map[string]int{}
	for _, tr := range p.PC.GetTransceivers() {
		if d := tr.Direction(); tr.Sender() == nil && (d == webrtc.RTPTransceiverDirectionSendonly || d == webrtc.RTPTransceiverDirectionSendrecv) {
			free[tr.Kind().String()]++
		}
	}
	added := 0
	for _, w := range ws {
		if w.data != nil || free[w.st.kind] == 0 {
			continue // no m-line of the offer can carry it
		}
		free[w.st.kind]--
		if err := sub.addStream(w); err != nil {
			return nil, err
		}
		added++
	}
	if added == 0 {
		return nil, errorf(ErrInvalidSDP, "The offer has no receiving m-line for the feed's streams")
	}
	desc, err := p.AnswerOffer(ctx)
	if err != nil {
		return nil, errorf(ErrUnknown, "Creating the answer: %v", err)
	}
	sub.mu.Lock()
	for _, ss := range sub.streams {
		ss.mid = ss.tr.Mid()
		if !ss.started {
			ss.started = true
			ss.down.Start()
		}
	}
	sub.mu.Unlock()
	sub.setPaused(false)
	return &plugin.JSEP{Type: "answer", SDP: desc.SDP}, nil
}

// transceiver puts a down-track on the PeerConnection: a new sendonly m-line for strata's own
// offer, or the next free m-line of its kind from the client's offer (Pion's AddTrack takes it).
func (sub *subscriber) transceiver(pc *webrtc.PeerConnection, track webrtc.TrackLocal) (*webrtc.RTPTransceiver, error) {
	sub.mu.Lock()
	clientOffer := sub.clientOffer
	sub.mu.Unlock()
	if !clientOffer {
		return pc.AddTransceiverFromTrack(track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly})
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

// reanswer answers a new offer from a client-offer subscription (an ICE restart, WHEP's PATCH).
func (sub *subscriber) reanswer(ctx context.Context, tx string, jsep *plugin.JSEP) *requestError {
	sub.mu.Lock()
	p, clientOffer := sub.peer, sub.clientOffer
	sub.mu.Unlock()
	if !clientOffer || p == nil {
		return errorf(ErrInvalidRequest, "Only a subscription that started with the client's offer takes offers")
	}
	if jsep.Type != "offer" {
		return errorf(ErrInvalidSDPType, "Unsupported SDP type '%s'", jsep.Type)
	}
	desc, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP})
	if err != nil {
		return errorf(ErrInvalidSDP, "Error applying the offer: %v", err)
	}
	sub.s.push(tx, map[string]any{short: "event", "room": sub.room.id, "configured": "ok"}, &plugin.JSEP{Type: "answer", SDP: desc.SDP})
	return nil
}

func (sub *subscriber) answersOffers() bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.clientOffer
}
