package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// create makes a session owned by the request's sink; a client-chosen id must be free (468).
func (g *Gateway) create(req *janus.Request, from Origin) janus.Message {
	if !g.acceptNew.Load() || g.ctx.Err() != nil { // disabled, or the gateway is shutting down
		return janus.ErrorReply(0, req.Transaction, janus.Errorf(janus.ErrNotAcceptingSessions, "Not accepting new sessions"))
	}
	if jerr := g.refuseByNode(); jerr != nil {
		return janus.ErrorReply(0, req.Transaction, jerr)
	}
	slot := g.nodeSlot()
	id := req.ID
	if jerr := checkChosenID(id, slot); id != 0 && jerr != nil {
		return janus.ErrorReply(0, req.Transaction, jerr)
	}
	g.mu.Lock()
	if id != 0 {
		if _, taken := g.sessions[id]; taken {
			g.mu.Unlock()
			return janus.ErrorReply(0, req.Transaction, janus.Errorf(janus.ErrSessionConflict, "Session ID already in use"))
		}
	} else {
		id = g.newSessionID(slot)
	}
	addr, jerr := g.limits.admitSession(len(g.sessions), from.RemoteAddr)
	if jerr != nil {
		g.mu.Unlock()
		g.log.Debug("session refused", "remote", from.RemoteAddr, "reason", jerr.Reason)
		return janus.ErrorReply(0, req.Transaction, jerr)
	}
	s := newSession(g, id)
	s.addr = addr
	g.sessions[id] = s
	g.mu.Unlock()
	s.claim(from.Sink)
	g.emitSession(s, "created", true)
	g.log.Debug("session created", "session", id, "transport", s.transportName())
	return janus.Message{Janus: "success", Transaction: req.Transaction, Data: map[string]uint64{"id": id}}
}

// attach creates a handle on a plugin. The handle id is reserved before the plugin's Attach runs, but
// the handle only becomes reachable once Attach has returned.
func (g *Gateway) attach(ctx context.Context, s *session, req *janus.Request) janus.Message {
	fail := func(e *janus.Error) janus.Message { return janus.ErrorReply(s.id, req.Transaction, e) }
	if _, present := req.Fields["plugin"]; !present {
		return fail(janus.Missing("plugin"))
	}
	p, ok := g.plugins[req.Plugin]
	if !ok {
		return fail(janus.Errorf(janus.ErrPluginNotFound, "No such plugin '%s'", req.Plugin))
	}
	// As Janus: with token_auth, a request that carries a token (even one past api_secret) attaches
	// only to the plugins that token is allowed.
	if g.cfg.General.TokenAuth && req.Token != "" && !g.tokens.allows(req.Token, req.Plugin) {
		return fail(janus.Errorf(janus.ErrUnauthorizedPlugin, "Provided token can't access plugin '%s'", req.Plugin))
	}
	if limit := g.limits.HandlesPerSession; !s.reserveHandle(limit) {
		return fail(janus.Errorf(janus.ErrPluginAttach,
			"Couldn't attach to plugin: the session has its limit of %d handles (general.limits.handles_per_session)", limit))
	}
	defer s.endAttach()
	g.mu.Lock()
	id := newID(func(x uint64) bool { _, ok := g.handles[x]; return ok })
	g.handles[id] = nil // reserved: lookups still answer 459
	g.mu.Unlock()
	unreserve := func() {
		g.mu.Lock()
		delete(g.handles, id)
		g.mu.Unlock()
	}

	h := newHandle(g, s, id, p, req.OpaqueID)
	var ps plugin.Session
	var attachErr error
	if perr := guard(func() { ps, attachErr = p.Attach(h) }); perr != nil {
		attachErr = perr
	}
	if attachErr == nil && ps == nil {
		attachErr = errors.New("plugin returned no session")
	}
	if attachErr != nil {
		unreserve()
		h.cancel()
		return fail(janus.Errorf(janus.ErrPluginAttach, "Couldn't attach to plugin: error '%v'", attachErr))
	}
	h.ps = ps
	g.mu.Lock()
	g.handles[id] = h
	g.mu.Unlock()
	if !s.addHandle(h) { // the session was destroyed while the plugin attached
		h.detach("Session destroyed", false, nil)
		return fail(errNoSession(s.id))
	}
	h.emitHandle("attached")
	h.log.Debug("handle attached", "opaque_id", req.OpaqueID)
	return janus.Message{Janus: "success", SessionID: s.id, Transaction: req.Transaction, Data: map[string]uint64{"id": id}}
}

// message validates the body and JSEP, then queues the message for the plugin.
func (g *Gateway) message(h *handle, req *janus.Request, reply func(janus.Message)) {
	fail := func(e *janus.Error) { reply(janus.ErrorReply(h.sess.id, req.Transaction, e)) }
	if req.Body == nil {
		fail(janus.Missing("body"))
		return
	}
	var jsep *plugin.JSEP
	if req.JSEP != nil {
		var jerr *janus.Error
		if jsep, jerr = g.parseJSEP(req.JSEP); jerr != nil {
			fail(jerr)
			return
		}
		if jerr := h.noteRemoteJSEP(jsep); jerr != nil {
			fail(jerr)
			return
		}
		h.emitJSEP("remote", jsep)
	}
	h.enqueueMessage(plugin.Message{Transaction: req.Transaction, Body: req.Body, JSEP: jsep}, reply)
}

// parseJSEP checks a client's JSEP: type and sdp are mandatory strings, the type is offer or answer
// (464), the SDP parses and an offer has no more m-lines than general.limits.offer_media (465).
func (g *Gateway) parseJSEP(raw json.RawMessage) (*plugin.JSEP, *janus.Error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, janus.WrongType("jsep", "an object")
	}
	for _, name := range []string{"type", "sdp"} {
		v, ok := fields[name]
		if !ok {
			return nil, janus.Missing(name)
		}
		var str string
		if json.Unmarshal(v, &str) != nil {
			return nil, janus.WrongType(name, "a string")
		}
	}
	var j plugin.JSEP
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, janus.Errorf(janus.ErrInvalidElementType, "Invalid element type in jsep: %v", err)
	}
	if j.Type != "offer" && j.Type != "answer" {
		return nil, janus.Errorf(janus.ErrJSEPUnknownType, "JSEP error: unknown message type '%s'", j.Type)
	}
	if jerr := g.limits.checkOffer(j.Type, j.SDP); jerr != nil {
		return nil, jerr
	}
	if err := checkSDP(j.SDP); err != nil {
		return nil, janus.Errorf(janus.ErrJSEPInvalidSDP, "Invalid SDP (%v)", err)
	}
	return &j, nil
}

// checkSDP parses an SDP with Pion's parser, the one that will have to accept it later.
func checkSDP(text string) (err error) {
	if !strings.HasPrefix(text, "v=") {
		return errors.New("doesn't start with v=")
	}
	var sd sdp.SessionDescription
	if perr := guard(func() { err = sd.UnmarshalString(text) }); perr != nil {
		return perr
	}
	return err
}

// noteRemoteJSEP records the client's description; an answer is only acceptable after the plugin
// sent an offer on this handle (469 otherwise).
func (h *handle) noteRemoteJSEP(j *plugin.JSEP) *janus.Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch j.Type {
	case "answer":
		if !h.awaitingAnswer {
			return janus.Errorf(janus.ErrUnexpectedAnswer, "Unexpected ANSWER (did we offer?)")
		}
		h.awaitingAnswer = false
		h.flags.GotAnswer = true
		h.flags.Negotiated = true
	case "offer":
		// A client offer supersedes any offer of ours still waiting for an answer.
		h.awaitingAnswer = false
		h.flags.GotOffer = true
	}
	h.flags.E2EE = j.E2EE
	return nil
}

// trickle passes the client's candidates to the handle's PeerConnection, creating it if the offer
// has not arrived yet (the peer queues candidates until it has a remote description). A request
// with more candidates than general.limits.trickle_candidates is refused whole.
func (g *Gateway) trickle(h *handle, req *janus.Request) janus.Message {
	sid, tx := h.sess.id, req.Transaction
	fail := func(e *janus.Error) janus.Message { return janus.ErrorReply(sid, tx, e) }
	if limit := g.limits.TrickleCandidates; limit > 0 && len(req.Candidates) > limit {
		return fail(janus.Errorf(janus.ErrWebRTCState, "Cannot trickle: %d candidates in one request, the limit is %d (general.limits.trickle_candidates)",
			len(req.Candidates), limit))
	}
	cands, done, jerr := parseTrickle(req, h)
	if jerr != nil {
		return fail(jerr)
	}
	p, err := h.Peer()
	switch {
	case errors.Is(err, errHandleGone):
		return fail(errNoHandle(sid, h.id))
	case err != nil && len(cands) > 0:
		return fail(janus.Errorf(janus.ErrWebRTCState, "Cannot trickle: %v", err))
	}
	var hint string
	if p != nil {
		if hint, jerr = addCandidates(h, p, cands); jerr != nil {
			return fail(jerr)
		}
		if done {
			p.RemoteCandidatesDone()
		}
	}
	h.mu.Lock()
	h.flags.Trickle = true
	h.flags.AllTrickles = h.flags.AllTrickles || done
	h.mu.Unlock()
	return janus.Message{Janus: "ack", SessionID: sid, Transaction: tx, Hint: hint}
}

// addCandidates gives trickled candidates to the PeerConnection. Candidates over the
// PeerConnection's limit make the reply an error (471) saying how many were not used; candidates
// that can no longer matter (ICE connected, an earlier ICE generation) are ignored, and the ack's
// hint says so. Unparseable ones are skipped, as Janus skips them.
func addCandidates(h *handle, p *peer.Peer, cands []webrtc.ICECandidateInit) (string, *janus.Error) {
	var limited, late, stale int
	var limitErr error
	for _, c := range cands {
		err := p.AddRemoteCandidate(c)
		switch {
		case err == nil:
		case errors.Is(err, peer.ErrCandidateLimit):
			limited++
			limitErr = err
		case errors.Is(err, peer.ErrICECompleted):
			late++
		case errors.Is(err, peer.ErrStaleCandidate):
			stale++
		default:
			h.log.Debug("remote candidate refused", "candidate", c.Candidate, "err", err)
		}
	}
	if limited > 0 {
		h.log.Debug("remote candidates over the limit", "refused", limited, "of", len(cands))
		return "", janus.Errorf(janus.ErrWebRTCState, "Cannot trickle: %d of %d candidates not used, %v (general.limits.remote_candidates)",
			limited, len(cands), limitErr)
	}
	var hints []string
	if late > 0 {
		hints = append(hints, fmt.Sprintf("%d candidates ignored: ICE is already connected", late))
	}
	if stale > 0 {
		hints = append(hints, fmt.Sprintf("%d candidates ignored: their ufrag is not the current ICE generation's", stale))
	}
	return strings.Join(hints, "; "), nil
}

// parseTrickle reads candidate (one object) or candidates (an array). A bad single candidate is an
// error; bad entries of an array are skipped, as Janus skips them.
func parseTrickle(req *janus.Request, h *handle) ([]webrtc.ICECandidateInit, bool, *janus.Error) {
	_, hasOne := req.Fields["candidate"]
	_, hasMany := req.Fields["candidates"]
	switch {
	case hasOne && hasMany:
		return nil, false, janus.Errorf(janus.ErrInvalidJSON, "Can't have both candidate and candidates")
	case hasOne:
		c, done, jerr := parseCandidate(req.Candidate)
		if jerr != nil || done {
			return nil, done, jerr
		}
		return []webrtc.ICECandidateInit{c}, false, nil
	case hasMany:
		var out []webrtc.ICECandidateInit
		done := false
		for _, raw := range req.Candidates {
			c, end, jerr := parseCandidate(raw)
			switch {
			case jerr != nil:
				h.log.Debug("skipping bad trickle candidate", "err", jerr.Reason)
			case end:
				done = true
			default:
				out = append(out, c)
			}
		}
		return out, done, nil
	}
	return nil, false, janus.Missing("candidate")
}

// parseCandidate reads {"completed":true} or {"candidate":..., "sdpMid":..., "sdpMLineIndex":...}.
func parseCandidate(raw json.RawMessage) (webrtc.ICECandidateInit, bool, *janus.Error) {
	var c webrtc.ICECandidateInit
	var fields map[string]json.RawMessage
	if !janus.IsObject(raw) || json.Unmarshal(raw, &fields) != nil {
		return c, false, janus.WrongType("candidate", "an object")
	}
	if v, ok := fields["completed"]; ok {
		var completed bool
		if json.Unmarshal(v, &completed) != nil {
			return c, false, janus.WrongType("completed", "a boolean")
		}
		if completed {
			return c, true, nil
		}
	}
	if _, ok := fields["candidate"]; !ok {
		return c, false, janus.Missing("candidate")
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, false, janus.Errorf(janus.ErrInvalidElementType, "Invalid element type in candidate: %v", err)
	}
	return c, false, nil
}
