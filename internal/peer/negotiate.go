package peer

import (
	"context"
	"errors"
	"fmt"

	"github.com/pion/webrtc/v4"
)

// ErrNotOffer and ErrNotAnswer report a session description of the wrong type.
var (
	ErrNotOffer  = errors.New("peer: session description is not an offer")
	ErrNotAnswer = errors.New("peer: session description is not an answer")
)

// NegotiateOption adjusts one negotiation.
type NegotiateOption func(*negotiateOptions)

type negotiateOptions struct {
	beforeLocal func(*webrtc.PeerConnection) error
}

// BeforeLocal runs f after the remote offer is applied and before the answer is created (or, for
// Offer, before the offer is created). Plugins use it to add their send tracks to the transceivers
// the offer created and to restrict codecs with SetCodecPreferences.
func BeforeLocal(f func(pc *webrtc.PeerConnection) error) NegotiateOption {
	return func(o *negotiateOptions) { o.beforeLocal = f }
}

func collect(opts []NegotiateOption) negotiateOptions {
	var o negotiateOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Answer applies a remote offer and returns strata's answer. In half-trickle mode (Janus's default)
// it waits until candidate gathering completes, so the answer carries every candidate and
// a=end-of-candidates; with full trickle it returns at once, without candidates, and candidates follow
// through Hooks.OnCandidate.
func (p *Peer) Answer(ctx context.Context, offer webrtc.SessionDescription, opts ...NegotiateOption) (webrtc.SessionDescription, error) {
	if err := p.SetOffer(offer); err != nil {
		return webrtc.SessionDescription{}, err
	}
	return p.AnswerOffer(ctx, opts...)
}

// Offer creates a server-side offer (e.g. towards a videoroom subscriber), with the same trickle
// behaviour as Answer. The client's answer goes to SetAnswer.
func (p *Peer) Offer(ctx context.Context, opts ...NegotiateOption) (webrtc.SessionDescription, error) {
	if p.isClosed() {
		return webrtc.SessionDescription{}, ErrClosed
	}
	o := collect(opts)
	if o.beforeLocal != nil {
		if err := o.beforeLocal(p.PC); err != nil {
			return webrtc.SessionDescription{}, err
		}
	}
	offer, err := p.PC.CreateOffer(nil)
	if err != nil {
		return webrtc.SessionDescription{}, fmt.Errorf("create offer: %w", err)
	}
	// Candidates the client trickles from now on belong to its answer (with an ICE restart, to new
	// credentials): queue them until SetAnswer applies it. Added to the previous description, Pion
	// drops them for their unknown ufrag, and the restarted ICE waits for peer-reflexive luck.
	p.mu.Lock()
	p.remoteSet = false
	p.mu.Unlock()
	return p.setLocal(ctx, offer)
}

// SetAnswer applies the client's answer to an Offer.
func (p *Peer) SetAnswer(answer webrtc.SessionDescription) error {
	if answer.Type != webrtc.SDPTypeAnswer {
		return ErrNotAnswer
	}
	return p.setRemote(answer)
}

// setRemote applies a remote description and then the candidates queued before it. A description
// with more remote candidates than the limit is refused before Pion sees it.
func (p *Peer) setRemote(desc webrtc.SessionDescription) error {
	if p.isClosed() {
		return ErrClosed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	next, err := p.cands.admitDescription(desc.SDP)
	if err != nil {
		return err
	}
	if err := p.PC.SetRemoteDescription(desc); err != nil {
		return fmt.Errorf("set remote description: %w", err)
	}
	p.cands = next
	p.remoteSet = true
	for _, c := range p.cands.takePending() {
		key, ufrag, _ := parseCandidate(c.Candidate) // parsed when queued
		if err := p.addLocked(c, key, ufrag); err != nil {
			p.log.Debug("queued remote candidate not used", "candidate", c.Candidate, "err", err)
		}
	}
	p.remap.Store(true)
	return nil
}

// setLocal applies a local description and, in half-trickle mode, waits for gathering to finish.
func (p *Peer) setLocal(ctx context.Context, desc webrtc.SessionDescription) (webrtc.SessionDescription, error) {
	var gathered <-chan struct{}
	if !p.fullTrickle {
		gathered = webrtc.GatheringCompletePromise(p.PC)
	}
	if err := p.PC.SetLocalDescription(desc); err != nil {
		return webrtc.SessionDescription{}, fmt.Errorf("set local description: %w", err)
	}
	p.remap.Store(true)
	if p.fullTrickle {
		// The description as created: candidates are trickled, none is in the SDP.
		return desc, nil
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return webrtc.SessionDescription{}, fmt.Errorf("gathering candidates: %w", ctx.Err())
	case <-p.closed:
		return webrtc.SessionDescription{}, ErrClosed
	}
	local := p.PC.LocalDescription()
	if local == nil {
		return webrtc.SessionDescription{}, ErrClosed
	}
	return *local, nil
}
