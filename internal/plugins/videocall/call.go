package videocall

import (
	"context"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// startCall handles `call`: the checks in Janus's order, then strata answers the caller's offer
// (kept until the callee accepts) and offers the callee the same m-lines, sending on each what the
// other user sends.
func (s *session) startCall(m plugin.Message, r *request) *plugin.RequestError {
	s.p.mu.Lock()
	name, busy := s.username, s.peer != nil
	s.p.mu.Unlock()
	if name == "" {
		return plugin.Errorf(ErrRegisterFirst, "Register a username first")
	}
	if busy {
		return plugin.Errorf(ErrAlreadyInCall, "Already in a call")
	}
	target, err := r.username()
	if err != nil {
		return err
	}
	if target == name {
		return plugin.Errorf(ErrUseEchoTest, "You can't call yourself... use the EchoTest for that")
	}
	callee, err := s.p.link(s, target)
	if err != nil {
		return err
	}
	if callee == nil { // busy: Janus answers with a hangup rather than an error
		s.result(m.Transaction, map[string]any{"event": "hangup", "username": name, "reason": "User busy"}, nil)
		s.h.ClosePeer("videocall: user busy")
		return nil
	}
	if err := checkOffer(m.JSEP); err != nil {
		s.p.unlink(s, callee)
		return err
	}
	c, offer, err := s.negotiateCall(m, callee)
	if err != nil {
		s.p.unlink(s, callee)
		// Both PeerConnections may hold half a negotiation: the next call starts afresh.
		s.h.ClosePeer("videocall: call failed")
		callee.h.ClosePeer("videocall: call failed")
		return err
	}
	if !s.p.attach(c) { // one of them hung up meanwhile
		c.close()
		return plugin.Errorf(ErrNoCall, "Call ended")
	}
	callee.result("", map[string]any{"event": "incomingcall", "username": name}, offer)
	// Janus's code (not its documentation) names no one in the caller's "calling".
	s.result(m.Transaction, map[string]any{"event": "calling"}, nil)
	return nil
}

// negotiateCall sets up both PeerConnections of a call.
func (s *session) negotiateCall(m plugin.Message, callee *session) (*call, *plugin.JSEP, *plugin.RequestError) {
	ctx, cancel := context.WithTimeout(s.q.Context(), negotiateTimeout)
	defer cancel()
	c, err := newCall(s, callee)
	if err != nil {
		return nil, nil, err
	}
	offer, err := c.negotiate(ctx, m.JSEP)
	if err != nil {
		c.close()
		return nil, nil, err
	}
	return c, offer, nil
}

// checkOffer is Janus's check of the JSEP a call carries.
func checkOffer(jsep *plugin.JSEP) *plugin.RequestError {
	if jsep == nil || jsep.SDP == "" {
		return plugin.Errorf(ErrMissingSDP, "Missing SDP")
	}
	if jsep.Type != "offer" {
		return plugin.Errorf(ErrInvalidSDP, "Error parsing offer: not an offer (%s)", jsep.Type)
	}
	return nil
}

// link pairs caller with the user named target: nil (and no error) if that user is in a call.
func (p *Plugin) link(caller *session, target string) (*session, *plugin.RequestError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	callee := p.users[target]
	if callee == nil {
		return nil, plugin.Errorf(ErrNoSuchUsername, "Username '%s' doesn't exist", target)
	}
	if callee.peer != nil {
		return nil, nil
	}
	caller.peer, callee.peer = callee, caller
	return callee, nil
}

// unlink undoes link after a failed setup.
func (p *Plugin) unlink(caller, callee *session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if caller.peer == callee {
		caller.peer, caller.call = nil, nil
	}
	if callee.peer == caller {
		callee.peer, callee.call = nil, nil
	}
}

// attach gives both users the call, unless one of them left it during the negotiation.
func (p *Plugin) attach(c *call) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, b := c.legs[0].s, c.legs[1].s
	if a.peer != b || b.peer != a {
		return false
	}
	a.call, b.call = c, c
	return true
}

// accept handles `accept` with the callee's answer: both users hear "accepted", the caller with
// strata's answer to its offer.
func (s *session) accept(m plugin.Message) *plugin.RequestError {
	s.p.mu.Lock()
	c, name := s.call, s.username
	incoming := c != nil && c.legs[1].s == s && !c.accepted
	s.p.mu.Unlock()
	if !incoming {
		return plugin.Errorf(ErrNoCall, "No incoming call to accept")
	}
	if m.JSEP == nil || m.JSEP.SDP == "" {
		return plugin.Errorf(ErrMissingSDP, "Missing SDP")
	}
	if m.JSEP.Type != "answer" {
		return plugin.Errorf(ErrInvalidSDP, "Error parsing answer: not an answer (%s)", m.JSEP.Type)
	}
	if err := c.legs[1].peer.SetAnswer(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: m.JSEP.SDP}); err != nil {
		return plugin.Errorf(ErrInvalidSDP, "Error parsing answer: %v", err)
	}
	for mid, rids := range media.OfferRIDs(m.JSEP.SDP) {
		if t := c.legs[1].track(mid); t != nil && len(rids) > 1 {
			t.simulcast.Store(true)
		}
	}
	s.p.mu.Lock()
	c.accepted = true
	s.p.mu.Unlock()
	c.legs[0].s.result("", map[string]any{"event": "accepted", "username": name}, c.answer)
	s.result(m.Transaction, map[string]any{"event": "accepted"}, nil)
	return nil
}

// set handles `set`: audio and video switch this user's media to the peer on or off, bitrate caps
// what this user's browser sends (REMB), the layer fields cap what this user receives. A JSEP
// offer (an ICE restart with restart, or a renegotiation of the same m-lines) is answered on this
// user's own PeerConnection, the answer coming back in an "update" event as Janus relays the
// peer's: with strata in the middle the peer has nothing to renegotiate. A JSEP answer completes
// an offer strata sent in an "update".
func (s *session) set(m plugin.Message, r *request) *plugin.RequestError {
	st, err := parseSet(r.body)
	if err != nil {
		return err
	}
	if err := s.checkFilename(st); err != nil {
		return err
	}
	if st.audio != nil {
		s.audioActive.Store(*st.audio)
	}
	if st.video != nil {
		s.videoActive.Store(*st.video)
	}
	if st.bitrate != nil {
		s.bitrate.Store(uint32(min(*st.bitrate, int64(^uint32(0)))))
	}
	s.p.mu.Lock()
	capLayer(&s.want, st.substream, st.temporal)
	capLayer(&s.want, st.spatial, st.temporalSVC)
	c := s.call
	s.p.mu.Unlock()
	s.applyRecord(c, st)
	hasSDP := m.JSEP != nil && m.JSEP.SDP != ""
	if st.restart != nil && *st.restart && !hasSDP {
		s.log.Warn("Got a 'restart' request, but no SDP update? Ignoring...")
	}
	var update *plugin.JSEP
	if c != nil {
		c.applySettings(s)
		if hasSDP {
			if update, err = c.renegotiate(s, m.JSEP); err != nil {
				return err
			}
		}
	}
	s.result(m.Transaction, map[string]any{"event": "set"}, nil)
	if update != nil {
		s.result("", map[string]any{"event": "update"}, update)
	}
	return nil
}

// capLayer sets the spatial and temporal caps that are given.
func capLayer(l *policy.Layer, spatial, temporal *int64) {
	if spatial != nil {
		l.Spatial = int8(min(*spatial, policy.MaxSpatial-1))
	}
	if temporal != nil {
		l.Temporal = int8(min(*temporal, policy.MaxTemporal-1))
	}
}

// renegotiate answers an offer of a user in a call on that user's PeerConnection, or applies an
// answer to strata's last offer (nil JSEP back).
func (c *call) renegotiate(s *session, jsep *plugin.JSEP) (*plugin.JSEP, *plugin.RequestError) {
	l := c.leg(s)
	switch jsep.Type {
	case "answer":
		if err := l.peer.SetAnswer(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: jsep.SDP}); err != nil {
			return nil, plugin.Errorf(ErrInvalidSDP, "Error parsing answer: %v", err)
		}
		return nil, nil
	case "offer":
	default:
		return nil, plugin.Errorf(ErrInvalidSDP, "Error parsing offer: not an offer (%s)", jsep.Type)
	}
	ctx, cancel := context.WithTimeout(s.q.Context(), negotiateTimeout)
	defer cancel()
	answer, err := l.peer.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP})
	if err != nil {
		return nil, plugin.Errorf(ErrInvalidSDP, "Error parsing offer: %v", err)
	}
	return &plugin.JSEP{Type: "answer", SDP: answer.SDP}, nil
}
