package sip

import (
	"context"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/plugin"
)

// onInvite handles an INVITE: a re-INVITE of the call, a new call (ringing, incomingcall with the
// browser's offer), or 486 Busy Here with missed_call when the handle is already in a call and none
// of its helpers is free. The handler returns once the INVITE has its final response, as the
// server transaction ends with it.
func (s *session) onInvite(req *sip.Request, tx sip.ServerTransaction) {
	s.mu.Lock()
	cur, detached := s.call, s.detached
	s.mu.Unlock()
	if detached {
		_ = tx.Respond(sip.NewResponseFromRequest(req, 480, "Temporarily Unavailable", nil))
		return
	}
	if cur != nil && cur.id == req.CallID().Value() && req.To().Params.Has("tag") {
		s.onReinvite(cur, req, tx)
		return
	}
	if cur != nil {
		if h := s.freeHelper(); h != nil {
			h.incoming(s.stackOf(), req, tx)
			return
		}
		s.event("", req.CallID().Value(), map[string]any{"event": "missed_call", "caller": req.From().Address.String(),
			"displayname": req.From().DisplayName, "callee": req.To().Address.String()}, nil)
		_ = tx.Respond(sip.NewResponseFromRequest(req, 486, "Busy Here", nil))
		return
	}
	s.incoming(s.stackOf(), req, tx)
}

func (s *session) stackOf() *stack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// route finds the helper whose call (on this master's stack) req belongs to; this session
// otherwise.
func (s *session) route(req *sip.Request) handlers {
	id := req.CallID()
	if id == nil {
		return s
	}
	for _, h := range s.p.sessions.All() {
		h.mu.Lock()
		ok := h.master == s && h.call != nil && h.call.id == id.Value()
		h.mu.Unlock()
		if ok {
			return h
		}
	}
	return s
}

// freeHelper is an idle helper of this master, if any.
func (s *session) freeHelper() *session {
	for _, h := range s.p.sessions.All() {
		h.mu.Lock()
		ok := h.master == s && h.call == nil && !h.detached
		h.mu.Unlock()
		if ok {
			return h
		}
	}
	return nil
}

// incoming starts an incoming call on st (the master's stack for a helper).
func (s *session) incoming(st *stack, req *sip.Request, tx sip.ServerTransaction) {
	from := req.From()
	s.mu.Lock()
	user := s.acct.uri.User
	transport := "udp"
	if req.Transport() == "TCP" {
		transport = "tcp"
	}
	c := &call{id: req.CallID().Value(), state: callInvited, peerURI: from.Address.String(), st: st, user: user,
		transport: transport, autoaccept: true, done: make(chan struct{})}
	dua := &sipgo.DialogUA{Client: st.client(transport), ContactHDR: st.contact(user, transport, nil), RewriteContact: s.p.cfg.BehindNAT}
	dtx, err := dua.ReadInvite(req, tx)
	if err != nil || s.call != nil {
		s.mu.Unlock()
		_ = tx.Respond(sip.NewResponseFromRequest(req, 400, "Bad Request", nil))
		return
	}
	c.server = dtx
	s.call = c
	s.mu.Unlock()
	jsep, srtp, rerr := s.incomingMedia(c, req)
	if rerr != nil {
		s.log.Debug("incoming INVITE refused", "err", rerr.Reason)
		_ = dtx.Respond(488, "Not Acceptable Here", nil)
		s.dropCall(c)
		return
	}
	_ = dtx.Respond(180, "Ringing", nil)
	result := map[string]any{"event": "incomingcall", "username": c.peerURI, "callee": req.To().Address.String()}
	if from.DisplayName != "" {
		result["displayname"] = from.DisplayName
	}
	if srtp != "" {
		result["srtp"] = srtp
	}
	if rb := req.GetHeader("Referred-By"); rb != nil {
		result["referred_by"] = rb.Value()
	}
	if h := s.incomingHeaders(req.Headers()); h != nil {
		result["headers"] = h
	}
	s.event("", c.id, result, jsep)
	select {
	case <-c.done:
	case <-dtx.Context().Done():
		s.mu.Lock()
		final := c.finalSent
		s.mu.Unlock()
		if !final { // CANCEL, or the transaction died before an answer
			s.callFailed(c, 487, "Request Terminated")
		}
		<-c.done
	}
}

// incomingMedia makes the browser's offer from the INVITE's SDP (none for an offerless INVITE:
// the browser offers in accept). srtp says what the caller asked for, as incomingcall reports it.
func (s *session) incomingMedia(c *call, req *sip.Request) (*plugin.JSEP, string, *plugin.RequestError) {
	body := string(req.Body())
	srtp := ""
	if containsCrypto(body) {
		srtp = "sdes_optional"
		if containsSAVP(body) {
			srtp = "sdes_mandatory"
		}
	}
	if err := s.newBridge(c); err != nil {
		return nil, "", err
	}
	if body == "" {
		c.offerless = true
		return nil, srtp, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	j, err := c.bridge.FromPlain(ctx, body, webrtc.SDPTypeOffer)
	if err != nil {
		return nil, "", bridgeError(err)
	}
	return toJSEP(j), srtp, nil
}

// accept answers the incoming call (200 OK with the plain answer); progress sends the same SDP in
// a 183 Session Progress (early media) and keeps the call invited.
func (s *session) accept(ctx context.Context, r req, progress bool) *plugin.RequestError {
	s.mu.Lock()
	c := s.call
	s.mu.Unlock()
	if c == nil || c.state != callInvited || c.server == nil {
		status := callIdle
		if c != nil {
			status = c.state
		}
		return plugin.Errorf(ErrWrongState, "Wrong state (not invited? status=%s)", status)
	}
	if err := r.b.Validate(acceptParams...); err != nil {
		return err
	}
	if _, err := srtpMode(r.b); err != nil {
		return err
	}
	if r.b.Has("autoaccept_reinvites") {
		c.autoaccept = r.b.Bool("autoaccept_reinvites")
	}
	plain, answer, rerr := s.acceptSDP(ctx, c, r)
	if rerr != nil {
		return rerr
	}
	var hdrs []sip.Header
	for _, h := range customHeaders(r.raw) {
		hdrs = append(hdrs, sip.NewHeader(h.name, h.value))
	}
	hdrs = append(hdrs, sip.NewHeader("Content-Type", "application/sdp"))
	if progress {
		if err := c.server.Respond(183, "Session Progress", []byte(plain), hdrs...); err != nil {
			return plugin.Errorf(ErrLibSofia, "%v", err)
		}
		c.early = plain
		s.event(r.tx, c.id, map[string]any{"event": "progressing"}, nil)
		return nil
	}
	s.mu.Lock()
	c.state, c.finalSent = callInCall, true
	s.mu.Unlock()
	event := "accepted"
	if !answer {
		event = "accepting"
	}
	s.event(r.tx, c.id, map[string]any{"event": event}, nil)
	go s.sendOK(c, []byte(plain), hdrs)
	return nil
}

// acceptSDP is the plain SDP of the answer to an incoming INVITE: from the browser's JSEP (an
// answer, or an offer for an offerless INVITE), or the one a progress request already sent in its
// 183 (the browser answered then; accept needs no JSEP after it).
func (s *session) acceptSDP(ctx context.Context, c *call, r req) (plain string, answer bool, rerr *plugin.RequestError) {
	if c.early != "" && r.jsep == nil {
		return c.early, true, nil
	}
	if r.jsep == nil || r.jsep.SDP == "" {
		return "", false, plugin.Errorf(ErrMissingSDP, "Missing SDP")
	}
	answer = r.jsep.Type == "answer"
	typ := webrtc.SDPTypeOffer
	if answer {
		typ = webrtc.SDPTypeAnswer
	}
	plain, err := c.bridge.FromWebRTC(ctx, webrtc.SessionDescription{Type: typ, SDP: r.jsep.SDP})
	if err != nil {
		return "", false, bridgeError(err)
	}
	return plain, answer, nil
}

// sendOK sends the 200 OK and waits for its ACK (sipgo retransmits until then); an offerless
// call's answer comes in the ACK.
func (s *session) sendOK(c *call, sdp []byte, hdrs []sip.Header) {
	err := c.server.Respond(200, "OK", sdp, hdrs...)
	c.answered()
	if err != nil {
		s.log.Debug("200 OK not acknowledged", "err", err)
		_ = c.server.Bye(context.Background())
		s.callFailed(c, 408, "Request Timeout")
		return
	}
}

// onAck confirms the dialog; for an offerless INVITE its SDP is the answer to the browser's offer.
func (s *session) onAck(req *sip.Request, tx sip.ServerTransaction) {
	s.mu.Lock()
	c := s.call
	s.mu.Unlock()
	if c == nil || c.server == nil || c.id != req.CallID().Value() {
		return
	}
	_ = c.server.ReadAck(req, tx)
	if c.offerless && len(req.Body()) > 0 {
		c.offerless = false
		j, err := c.bridge.FromPlain(context.Background(), string(req.Body()), webrtc.SDPTypeAnswer)
		if err != nil {
			s.log.Debug("ACK SDP", "err", err)
			return
		}
		s.event("", c.id, map[string]any{"event": "accepted", "username": c.peerURI}, toJSEP(j))
	}
}

// decline refuses the incoming call with code (486 Busy Here by default); with refer_id it declines
// a transfer the peer asked for (its REFER was answered 202 already: nothing more is sent).
func (s *session) decline(r req) *plugin.RequestError {
	if r.b.Has("refer_id") {
		s.event(r.tx, "", map[string]any{"event": "declining", "refer_id": r.b.Int("refer_id"), "code": 603}, nil)
		return nil
	}
	s.mu.Lock()
	c := s.call
	s.mu.Unlock()
	if c == nil || c.state != callInvited || c.server == nil {
		status := callIdle
		if c != nil {
			status = c.state
		}
		return plugin.Errorf(ErrWrongState, "Wrong state (not invited? status=%s)", status)
	}
	code := 486
	if r.b.Has("code") {
		code = int(r.b.Int("code"))
		if code < 300 || code > 699 {
			return plugin.Errorf(ErrInvalidElement, "Invalid SIP response code (%d)", code)
		}
	}
	var hdrs []sip.Header
	for _, h := range customHeaders(r.raw) {
		hdrs = append(hdrs, sip.NewHeader(h.name, h.value))
	}
	s.mu.Lock()
	c.finalSent = true
	s.mu.Unlock()
	s.event(r.tx, c.id, map[string]any{"event": "declining", "code": code, "call_id": c.id}, nil)
	go func() {
		_ = c.server.Respond(code, reason(code), nil, hdrs...)
		c.answered()
		s.callFailed(c, code, reason(code))
	}()
	return nil
}

// hangup ends the call: BYE once established, CANCEL while our INVITE rings, a 480 for an
// incoming call not yet answered.
func (s *session) hangup(_ context.Context, r req) *plugin.RequestError {
	s.mu.Lock()
	c := s.call
	s.mu.Unlock()
	if c == nil || c.state == callClosing {
		status := callIdle
		if c != nil {
			status = c.state
		}
		return plugin.Errorf(ErrWrongState, "Wrong state (not in a call? status=%s)", status)
	}
	s.event(r.tx, c.id, map[string]any{"event": "hangingup"}, nil)
	go s.endCall("Hangup")
	return nil
}

// endCall ends whatever call there is, telling the SIP side, and reports hangup.
func (s *session) endCall(why string) {
	s.mu.Lock()
	c := s.call
	if c == nil || c.state == callClosing {
		s.mu.Unlock()
		return
	}
	prev := c.state
	c.state, c.finalSent = callClosing, true
	cancel := c.cancel
	s.mu.Unlock()
	switch {
	case prev == callCalling && cancel != nil:
		cancel() // WaitAnswer sends the CANCEL; runInvite reports 487
		return
	case prev == callInvited && c.server != nil:
		_ = c.server.Respond(480, "Temporarily Unavailable", nil)
		c.answered()
	case c.dialog() != nil:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.dialog().Bye(ctx)
		cancel()
	}
	s.log.Debug("call ended", "why", why)
	s.callFailed(c, 200, "Session Terminated")
}

// onBye: the peer hung up.
func (s *session) onBye(req *sip.Request, tx sip.ServerTransaction) {
	s.mu.Lock()
	c := s.call
	s.mu.Unlock()
	if c == nil || c.id != req.CallID().Value() {
		_ = tx.Respond(sip.NewResponseFromRequest(req, 481, "Call/Transaction Does Not Exist", nil))
		return
	}
	var err error
	if c.client != nil {
		err = c.client.ReadBye(req, tx)
	} else if c.server != nil {
		err = c.server.ReadBye(req, tx)
	}
	if err != nil {
		_ = tx.Respond(sip.NewResponseFromRequest(req, 481, "Call/Transaction Does Not Exist", nil))
		return
	}
	s.callFailed(c, 200, "Received BYE")
}

// onCancel: sipgo matches a CANCEL to its INVITE's transaction itself; one that reaches us
// matched nothing.
func (s *session) onCancel(req *sip.Request, tx sip.ServerTransaction) {
	_ = tx.Respond(sip.NewResponseFromRequest(req, 481, "Call/Transaction Does Not Exist", nil))
}
