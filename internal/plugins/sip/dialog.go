package sip

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/rtpbridge"
)

// pendingReinvite is an incoming re-INVITE whose offer went to the browser (updatingcall); the
// browser's answer comes in an update request.
type pendingReinvite struct {
	req    *sip.Request
	tx     sip.ServerTransaction
	answer chan []byte // the plain answer; nil refuses
}

// reinviteWait bounds how long the browser may take to answer an updatingcall.
const reinviteWait = 30 * time.Second

// onReinvite: with autoaccept_reinvites (Janus's default) the re-INVITE is answered with our
// current SDP and the browser hears nothing; otherwise its offer goes to the browser as
// updatingcall, and the update request's answer is sent back.
func (s *session) onReinvite(c *call, req *sip.Request, tx sip.ServerTransaction) {
	body := string(req.Body())
	if c.autoaccept || body == "" {
		s.respondSDP(c, req, tx, 200, []byte(c.bridge.LocalSDP()))
		return
	}
	j, err := c.bridge.FromPlain(context.Background(), body, webrtc.SDPTypeOffer)
	if err != nil {
		_ = tx.Respond(sip.NewResponseFromRequest(req, 488, "Not Acceptable Here", nil))
		return
	}
	p := &pendingReinvite{req: req, tx: tx, answer: make(chan []byte, 1)}
	s.mu.Lock()
	c.pending = p
	s.mu.Unlock()
	s.event("", c.id, map[string]any{"event": "updatingcall", "username": c.peerURI}, toJSEP(j))
	select {
	case sdp := <-p.answer:
		if sdp != nil {
			s.respondSDP(c, req, tx, 200, sdp)
			return
		}
	case <-time.After(reinviteWait):
	}
	s.mu.Lock()
	c.pending = nil
	s.mu.Unlock()
	_ = tx.Respond(sip.NewResponseFromRequest(req, 488, "Not Acceptable Here", nil))
}

func (s *session) respondSDP(c *call, req *sip.Request, tx sip.ServerTransaction, code int, sdp []byte) {
	res := sip.NewResponseFromRequest(req, code, reason(code), sdp)
	res.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
	contact := c.st.contact(c.user, c.transport, nil)
	res.AppendHeader(&contact)
	_ = tx.Respond(res)
}

// reinvite sends a re-INVITE with sdp in the call's dialog and ACKs its 2xx; the answer's SDP.
func (s *session) reinvite(ctx context.Context, c *call, sdp string, hdrs []header) (string, *plugin.RequestError) {
	req := s.inDialog(c, sip.INVITE, hdrs)
	req.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
	req.SetBody([]byte(sdp))
	res, err := c.dialog().Do(ctx, req)
	if err != nil {
		return "", plugin.Errorf(ErrLibSofia, "re-INVITE: %v", err)
	}
	if !res.IsSuccess() {
		return "", plugin.Errorf(ErrLibSofia, "re-INVITE refused: %d %s", res.StatusCode, res.Reason)
	}
	ack := s.inDialog(c, sip.ACK, nil)
	ack.CSeq().SeqNo = req.CSeq().SeqNo
	if err := c.dialog().WriteRequest(ack); err != nil {
		s.log.Debug("ACK of re-INVITE", "err", err)
	}
	return string(res.Body()), nil
}

// inDialog is a request of the call's dialog to the peer's Contact.
func (s *session) inDialog(c *call, m sip.RequestMethod, hdrs []header) *sip.Request {
	target := sip.Uri{}
	if c.client != nil && c.client.InviteResponse != nil && c.client.InviteResponse.Contact() != nil {
		target = c.client.InviteResponse.Contact().Address
	} else if c.server != nil && c.server.InviteRequest.Contact() != nil {
		target = c.server.InviteRequest.Contact().Address
	}
	req := sip.NewRequest(m, target)
	if m == sip.ACK {
		cseq := sip.CSeqHeader{MethodName: sip.ACK}
		req.AppendHeader(&cseq)
	}
	for _, h := range hdrs {
		req.AppendHeader(sip.NewHeader(h.name, h.value))
	}
	return req
}

// established returns the call when it is in progress, or Janus's wrong-state error.
func (s *session) established() (*call, *plugin.RequestError) {
	s.mu.Lock()
	c := s.call
	s.mu.Unlock()
	if c == nil || c.state != callInCall || c.dialog() == nil {
		status := callIdle
		if c != nil {
			status = c.state
		}
		return nil, plugin.Errorf(ErrWrongState, "Wrong state (not in a call? status=%s)", status)
	}
	return c, nil
}

// hold re-offers with direction (sendonly by default; recvonly or inactive), unhold with sendrecv.
func (s *session) hold(ctx context.Context, r req, on bool) *plugin.RequestError {
	c, rerr := s.established()
	if rerr != nil {
		return rerr
	}
	dir := rtpbridge.SendRecv
	if on {
		dir = rtpbridge.SendOnly
		if r.b.Has("direction") {
			switch d := rtpbridge.Direction(r.b.Str("direction")); d {
			case rtpbridge.SendOnly, rtpbridge.RecvOnly, rtpbridge.Inactive:
				dir = d
			default:
				return plugin.Errorf(ErrInvalidElement, "Invalid direction (%s)", d)
			}
		}
	}
	if c.held == on {
		// Janus says so and does nothing.
		s.event(r.tx, c.id, map[string]any{"event": map[bool]string{true: "holding", false: "resuming"}[on]}, nil)
		return nil
	}
	offer, err := c.bridge.Hold(dir)
	if err != nil {
		return bridgeError(err)
	}
	s.event(r.tx, c.id, map[string]any{"event": map[bool]string{true: "holding", false: "resuming"}[on]}, nil)
	answer, rerr := s.reinvite(ctx, c, offer, customHeaders(r.raw))
	if rerr != nil {
		return rerr
	}
	if _, err := c.bridge.FromPlain(ctx, answer, webrtc.SDPTypeAnswer); err != nil {
		return bridgeError(err)
	}
	s.mu.Lock()
	c.held = on
	s.mu.Unlock()
	return nil
}

// update renegotiates: the browser's answer to an updatingcall, or a new browser offer (an ICE
// restart, a track added) sent as a re-INVITE whose answer comes back to the browser.
func (s *session) update(ctx context.Context, r req) *plugin.RequestError {
	c, rerr := s.established()
	if rerr != nil {
		return rerr
	}
	if r.jsep == nil || r.jsep.SDP == "" {
		return plugin.Errorf(ErrMissingSDP, "Missing SDP")
	}
	s.mu.Lock()
	p := c.pending
	c.pending = nil
	s.mu.Unlock()
	if r.jsep.Type == "answer" {
		if p == nil {
			return plugin.Errorf(ErrWrongState, "Wrong state (no update pending)")
		}
		plain, err := c.bridge.FromWebRTC(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: r.jsep.SDP})
		if err != nil {
			p.answer <- nil
			return bridgeError(err)
		}
		p.answer <- []byte(plain)
		s.event(r.tx, c.id, map[string]any{"event": "updated"}, nil)
		return nil
	}
	plain, err := c.bridge.FromWebRTC(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: r.jsep.SDP})
	if err != nil {
		return bridgeError(err)
	}
	s.event(r.tx, c.id, map[string]any{"event": "updating"}, nil)
	answer, rerr := s.reinvite(ctx, c, plain, nil)
	if rerr != nil {
		return rerr
	}
	j, err := c.bridge.FromPlain(ctx, answer, webrtc.SDPTypeAnswer)
	if err != nil {
		return bridgeError(err)
	}
	s.event("", c.id, map[string]any{"event": "updated"}, toJSEP(j))
	return nil
}

// sendMessage sends a MESSAGE in the call's dialog, or out of dialog to uri when registered.
func (s *session) sendMessage(ctx context.Context, r req) *plugin.RequestError {
	ctype := r.b.Str("content_type")
	if ctype == "" {
		ctype = "text/plain"
	}
	content := r.b.Str("content")
	hdrs := customHeaders(r.raw)
	if !r.b.Has("uri") {
		c, rerr := s.established()
		if rerr != nil {
			return rerr
		}
		req := s.inDialog(c, sip.MESSAGE, hdrs)
		req.AppendHeader(sip.NewHeader("Content-Type", ctype))
		req.SetBody([]byte(content))
		s.event(r.tx, c.id, map[string]any{"event": "messagesent", "call_id": c.id}, nil)
		go s.deliver(c.id, func(ctx context.Context) (*sip.Response, error) { return c.dialog().Do(ctx, req) })
		return nil
	}
	s.mu.Lock()
	a, st, reg := s.acct, s.st, s.reg
	s.mu.Unlock()
	if st == nil || (reg != regRegistered && reg != regDisabled) {
		return plugin.Errorf(ErrWrongState, "Wrong state (not registered)")
	}
	to, err := parseURI(r.b.Str("uri"), false)
	if err != nil {
		return plugin.Errorf(ErrInvalidAddress, "Invalid user address %s\n", r.b.Str("uri"))
	}
	callID := r.b.Str("call_id")
	if callID == "" {
		callID = randomID()
	}
	req := sip.NewRequest(sip.MESSAGE, to)
	a.headers = hdrs
	s.prepare(req, a, st)
	from := sip.FromHeader{DisplayName: a.display, Address: a.uri, Params: sip.NewParams()}
	from.Params.Add("tag", randomID()[:10])
	cid := sip.CallIDHeader(callID)
	req.AppendHeader(&from)
	req.AppendHeader(&sip.ToHeader{Address: to})
	req.AppendHeader(&cid)
	req.AppendHeader(sip.NewHeader("Content-Type", ctype))
	req.SetBody([]byte(content))
	s.event(r.tx, "", map[string]any{"event": "messagesent", "call_id": callID}, nil)
	go s.deliver(callID, func(ctx context.Context) (*sip.Response, error) {
		return s.withAuth(ctx, st.client(a.transport), req, a.creds)
	})
	return nil
}

// deliver sends a MESSAGE and reports messagedelivery with the peer's answer.
func (s *session) deliver(callID string, send func(context.Context) (*sip.Response, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	res, err := send(ctx)
	code, reason := 408, "Request Timeout"
	if err == nil {
		code, reason = res.StatusCode, res.Reason
	}
	s.event("", callID, map[string]any{"event": "messagedelivery", "code": code, "reason": reason}, nil)
}

// sendInfo sends an INFO in the call's dialog: any content type, or DTMF as application/dtmf-relay.
func (s *session) sendInfo(ctx context.Context, r req, dtmf bool) *plugin.RequestError {
	c, rerr := s.established()
	if rerr != nil {
		return rerr
	}
	ctype, content, event := r.b.Str("type"), r.b.Str("content"), "infosent"
	if dtmf {
		duration := int64(160)
		if r.b.Has("duration") {
			duration = r.b.Int("duration")
		}
		ctype, event = "application/dtmf-relay", "dtmfsent"
		content = fmt.Sprintf("Signal=%s\r\nDuration=%d\r\n", r.b.Str("digit"), duration)
	}
	req := s.inDialog(c, sip.INFO, customHeaders(r.raw))
	req.AppendHeader(sip.NewHeader("Content-Type", ctype))
	req.SetBody([]byte(content))
	s.event(r.tx, c.id, map[string]any{"event": event}, nil)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		if _, err := c.dialog().Do(ctx, req); err != nil {
			s.log.Debug("INFO", "err", err)
		}
	}()
	return nil
}

var referIDs atomic.Uint32

// transfer sends a REFER (blind transfer) to the peer of the call.
func (s *session) transfer(ctx context.Context, r req) *plugin.RequestError {
	c, rerr := s.established()
	if rerr != nil {
		return rerr
	}
	if _, err := parseURI(r.b.Str("uri"), false); err != nil {
		return plugin.Errorf(ErrInvalidAddress, "Invalid user address %s\n", r.b.Str("uri"))
	}
	req := s.inDialog(c, sip.REFER, nil)
	req.AppendHeader(sip.NewHeader("Refer-To", "<"+r.b.Str("uri")+">"))
	s.mu.Lock()
	req.AppendHeader(sip.NewHeader("Referred-By", "<"+s.acct.identity+">"))
	s.mu.Unlock()
	s.event(r.tx, c.id, map[string]any{"event": "transferring"}, nil)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		if _, err := c.dialog().Do(ctx, req); err != nil {
			s.log.Debug("REFER", "err", err)
		}
	}()
	return nil
}

// onInfo reports an INFO of the call as an info event; one of no call is 481 (INFO lives in a dialog).
func (s *session) onInfo(req *sip.Request, tx sip.ServerTransaction) {
	s.mu.Lock()
	c := s.call
	s.mu.Unlock()
	if c == nil || req.CallID() == nil || c.id != req.CallID().Value() {
		_ = tx.Respond(sip.NewResponseFromRequest(req, 481, reason(481), nil))
		return
	}
	s.inbound(req, tx, "info")
}

// onMessage reports a MESSAGE (in or out of a dialog) as a message event.
func (s *session) onMessage(req *sip.Request, tx sip.ServerTransaction) {
	s.inbound(req, tx, "message")
}

// inbound reports an INFO's or MESSAGE's sender and content, then answers 200 (in this order, so
// that the event precedes whatever the peer does next, e.g. a BYE).
func (s *session) inbound(req *sip.Request, tx sip.ServerTransaction, event string) {
	defer func() { _ = tx.Respond(sip.NewResponseFromRequest(req, 200, "OK", nil)) }()
	ctype := ""
	if h := req.ContentType(); h != nil {
		ctype = h.Value()
	}
	from := req.From()
	if from == nil {
		return
	}
	result := map[string]any{"event": event, "sender": from.Address.String(), "content": string(req.Body())}
	if from.DisplayName != "" {
		result["displayname"] = from.DisplayName
	}
	if event == "info" {
		result["type"] = ctype
	} else {
		result["content_type"] = ctype
	}
	if h := s.incomingHeaders(req.Headers()); h != nil {
		result["headers"] = h
	}
	s.event("", req.CallID().Value(), result, nil)
}

// onRefer accepts a REFER (202) and reports it as transfer: the application decides whether to
// call refer_to (Janus's flow).
func (s *session) onRefer(req *sip.Request, tx sip.ServerTransaction) {
	to := req.GetHeader("Refer-To")
	if to == nil {
		_ = tx.Respond(sip.NewResponseFromRequest(req, 400, "Bad Request", nil))
		return
	}
	// The event goes first, so that it precedes what the peer does after our 202 (a BYE).
	defer func() { _ = tx.Respond(sip.NewResponseFromRequest(req, 202, "Accepted", nil)) }()
	result := map[string]any{"event": "transfer", "refer_id": referIDs.Add(1),
		"refer_to": strings.Trim(to.Value(), "<>")}
	if rb := req.GetHeader("Referred-By"); rb != nil {
		result["referred_by"] = rb.Value()
	}
	if h := s.incomingHeaders(req.Headers()); h != nil {
		result["headers"] = h
	}
	s.event("", req.CallID().Value(), result, nil)
}

// onOptions answers keepalives and capability queries.
func (s *session) onOptions(req *sip.Request, tx sip.ServerTransaction) {
	res := sip.NewResponseFromRequest(req, 200, "OK", nil)
	res.AppendHeader(sip.NewHeader("Allow", "INVITE, ACK, CANCEL, OPTIONS, BYE, REFER, NOTIFY, MESSAGE, INFO, UPDATE"))
	_ = tx.Respond(res)
}

// onNotify reports a NOTIFY (e.g. about a REFER's progress), then answers it.
func (s *session) onNotify(req *sip.Request, tx sip.ServerTransaction) {
	defer func() { _ = tx.Respond(sip.NewResponseFromRequest(req, 200, "OK", nil)) }()
	result := map[string]any{"event": "notify", "content": string(req.Body())}
	if ev := req.GetHeader("Event"); ev != nil {
		result["notify"] = ev.Value()
	}
	if ss := req.GetHeader("Subscription-State"); ss != nil {
		result["substate"] = ss.Value()
	}
	if ct := req.ContentType(); ct != nil {
		result["content-type"] = ct.Value()
	}
	s.event("", req.CallID().Value(), result, nil)
}
