package peer

import (
	"context"
	"fmt"

	"github.com/pion/webrtc/v4"
)

// SetOffer applies a remote offer without answering it yet: a media bridge learns the browser's
// codecs from it, asks the plain peer, and answers with AnswerOffer once the plain peer answered
// (Janus's SIP and NoSIP plugins answer the browser that late too).
func (p *Peer) SetOffer(offer webrtc.SessionDescription) error {
	if offer.Type != webrtc.SDPTypeOffer {
		return ErrNotOffer
	}
	return p.setRemote(offer)
}

// AnswerOffer answers the offer SetOffer applied, as Answer does.
func (p *Peer) AnswerOffer(ctx context.Context, opts ...NegotiateOption) (webrtc.SessionDescription, error) {
	o := collect(opts)
	if o.beforeLocal != nil {
		if err := o.beforeLocal(p.PC); err != nil {
			return webrtc.SessionDescription{}, err
		}
	}
	answer, err := p.PC.CreateAnswer(nil)
	if err != nil {
		return webrtc.SessionDescription{}, fmt.Errorf("create answer: %w", err)
	}
	return p.setLocal(ctx, answer)
}
