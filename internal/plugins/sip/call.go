package sip

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/rtpbridge"
)

// dialog is what both sides of a call's dialog offer (sipgo's client and server sessions).
type dialog interface {
	Do(ctx context.Context, req *sip.Request) (*sip.Response, error)
	WriteRequest(req *sip.Request) error
	Bye(ctx context.Context) error
}

// call is the handle's one call.
type call struct {
	id         string
	state      callState
	outgoing   bool
	peerURI    string // the callee we called, or the caller who called
	st         *stack
	user       string // our user part, for the Contact of what we send in the call
	transport  string
	bridge     *rtpbridge.Session
	srtp       rtpbridge.SRTPMode
	autoaccept bool // autoaccept_reinvites
	held       bool

	client *sipgo.DialogClientSession // outgoing
	server *sipgo.DialogServerSession // incoming
	cancel context.CancelFunc         // an outgoing INVITE still unanswered: CANCEL it
	done   chan struct{}              // incoming: closed once the INVITE got its final response
	once   sync.Once

	offerless bool             // incoming INVITE without SDP: the browser offers in accept
	finalSent bool             // incoming: we answered (or are answering) the INVITE
	early     string           // incoming: the plain SDP a progress request sent in a 183
	pending   *pendingReinvite // an incoming re-INVITE waiting for `update` (autoaccept off)
}

func (c *call) dialog() dialog {
	if c.client != nil {
		return c.client
	}
	if c.server != nil {
		return c.server
	}
	return nil
}

// answered closes done once (the incoming INVITE's final response went out, or it was cancelled).
func (c *call) answered() {
	c.once.Do(func() {
		if c.done != nil {
			close(c.done)
		}
	})
}

// startCall is Janus's call request: the browser's offer becomes an INVITE's SDP.
func (s *session) startCall(ctx context.Context, r req) *plugin.RequestError {
	s.mu.Lock()
	st, reg, busy := s.st, s.reg, s.call != nil
	a := s.acct
	status := callIdle
	if s.call != nil {
		status = s.call.state
	}
	s.mu.Unlock()
	if st == nil {
		return plugin.Errorf(ErrWrongState, "Wrong state (register first)")
	}
	if reg != regRegistered && reg != regDisabled {
		return plugin.Errorf(ErrWrongState, "Wrong state (not registered)")
	}
	if busy {
		return plugin.Errorf(ErrWrongState, "Wrong state (already in a call? status=%s)", status)
	}
	b := r.b
	if err := b.Validate(callParams...); err != nil {
		return err
	}
	if b.Has("secret") && b.Has("ha1_secret") {
		return plugin.Errorf(ErrInvalidElement, "Conflicting elements specified (secret and ha1_secret)")
	}
	uri, err := parseURI(b.Str("uri"), false)
	if err != nil {
		return plugin.Errorf(ErrInvalidAddress, "Invalid user address %s\n", b.Str("uri"))
	}
	srtp, rerr := srtpMode(b)
	if rerr != nil {
		return rerr
	}
	if r.jsep == nil || r.jsep.SDP == "" {
		return plugin.Errorf(ErrMissingSDP, "Missing SDP")
	}
	if r.jsep.Type != "offer" {
		return plugin.Errorf(ErrMissingSDP, "Missing SDP (not an offer)")
	}
	creds := a.creds
	if b.Has("secret") || b.Has("ha1_secret") {
		creds = credentials{user: a.uri.User, secret: b.Str("secret"), ha1: b.Str("ha1_secret")}
		if au := b.Str("authuser"); au != "" {
			creds.user = au
		}
	}
	c := &call{id: b.Str("call_id"), outgoing: true, peerURI: b.Str("uri"), st: st, srtp: srtp, user: a.uri.User,
		autoaccept: !b.Has("autoaccept_reinvites") || b.Bool("autoaccept_reinvites"),
		transport:  a.transport, state: callCalling}
	if t := uriTransport(uri); t != "" {
		c.transport = t
	}
	if c.id == "" {
		c.id = randomID()
	}
	if err := s.newBridge(c); err != nil {
		return err
	}
	plain, berr := c.bridge.FromWebRTC(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: r.jsep.SDP})
	if berr != nil {
		_ = c.bridge.Close()
		return bridgeError(berr)
	}
	s.mu.Lock()
	if s.call != nil {
		s.mu.Unlock()
		_ = c.bridge.Close()
		return plugin.Errorf(ErrWrongState, "Wrong state (already in a call? status=%s)", s.call.state)
	}
	// cancel is set before the INVITE leaves, so that a hangup at any time ends it (CANCEL).
	inviteCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	s.call = c
	s.mu.Unlock()
	invite := s.buildInvite(a, uri, c, []byte(plain), customHeaders(r.raw))
	s.event(r.tx, "", map[string]any{"event": "calling", "call_id": c.id}, nil)
	go s.runInvite(inviteCtx, cancel, c, invite, creds)
	return nil
}

// buildInvite makes the INVITE of a call: From the account (its display name), To the callee.
func (s *session) buildInvite(a account, to sip.Uri, c *call, body []byte, hdrs []header) *sip.Request {
	req := sip.NewRequest(sip.INVITE, to)
	a.headers = hdrs
	s.prepare(req, a, c.st)
	req.SetTransport(strings.ToUpper(c.transport))
	from := sip.FromHeader{DisplayName: a.display, Address: a.uri, Params: sip.NewParams()}
	from.Params.Add("tag", randomID()[:10])
	toH := sip.ToHeader{Address: to}
	callID := sip.CallIDHeader(c.id)
	req.AppendHeader(&from)
	req.AppendHeader(&toH)
	req.AppendHeader(&callID)
	req.AppendHeader(&sip.CSeqHeader{SeqNo: 1, MethodName: sip.INVITE})
	req.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
	req.SetBody(body)
	return req
}

// runInvite sends the INVITE and follows it to its end: provisional responses become ringing,
// proceeding and progress (183 with SDP: early media), a challenge is answered once per
// realm, 2xx is ACKed and becomes accepted with the browser's answer, anything else a hangup.
func (s *session) runInvite(ctx context.Context, cancel context.CancelFunc, c *call, invite *sip.Request, creds credentials) {
	defer cancel()
	dua := &sipgo.DialogUA{Client: c.st.client(c.transport), ContactHDR: c.st.contact(invite.From().Address.User, c.transport, nil),
		RewriteContact: s.p.cfg.BehindNAT}
	var res *sip.Response
	early := false
	for attempt := 0; attempt < 3; attempt++ {
		req := invite.Clone()
		if res != nil {
			if err := authorize(req, res, creds); err != nil {
				break
			}
			req.CSeq().SeqNo += uint32(attempt)
		}
		dtx, err := dua.WriteInvite(ctx, req)
		if err != nil {
			s.log.Debug("INVITE not sent", "err", err)
			s.callFailed(c, 503, "Service Unavailable")
			return
		}
		s.mu.Lock()
		c.client = dtx
		s.mu.Unlock()
		err = dtx.WaitAnswer(ctx, sipgo.AnswerOptions{OnResponse: func(r *sip.Response) error {
			if r.IsProvisional() && s.provisional(c, r, &early) != nil {
				return errors.New("bad early media")
			}
			return nil
		}})
		var de *sipgo.ErrDialogResponse
		switch {
		case err == nil:
			s.answered(c, dtx, early)
			return
		case errors.As(err, &de) && isChallenge(de.Res) && creds.usable() && res == nil:
			res = de.Res
			continue
		case errors.As(err, &de):
			s.callFailed(c, de.Res.StatusCode, de.Res.Reason)
			return
		case ctx.Err() != nil:
			s.callFailed(c, 487, "Request Terminated")
			return
		default:
			s.callFailed(c, 408, "Request Timeout")
			return
		}
	}
	if res != nil {
		s.callFailed(c, res.StatusCode, res.Reason)
	}
}

// provisional reports a 1xx: 180 ringing, 183 with SDP progress (early media, the browser gets
// its answer now), anything else but 100 proceeding.
func (s *session) provisional(c *call, r *sip.Response, early *bool) error {
	switch {
	case r.StatusCode == 100:
		return nil
	case r.StatusCode == 180:
		s.event("", c.id, map[string]any{"event": "ringing"}, nil)
	case r.StatusCode == 183 && len(r.Body()) > 0 && !*early:
		jsep, err := c.bridge.FromPlain(context.Background(), string(r.Body()), webrtc.SDPTypeAnswer)
		if err != nil {
			return err
		}
		*early = true
		s.event("", c.id, map[string]any{"event": "progress", "username": c.peerURI}, toJSEP(jsep))
	default:
		s.event("", c.id, map[string]any{"event": "proceeding", "code": r.StatusCode}, nil)
	}
	return nil
}

// answered: the callee's 2xx, ACKed; its SDP is the browser's answer (unless a 183 gave it).
func (s *session) answered(c *call, dtx *sipgo.DialogClientSession, early bool) {
	if err := dtx.Ack(context.Background()); err != nil {
		s.log.Debug("ACK", "err", err)
	}
	var jsep *plugin.JSEP
	if !early {
		j, err := c.bridge.FromPlain(context.Background(), string(dtx.InviteResponse.Body()), webrtc.SDPTypeAnswer)
		if err != nil {
			s.log.Debug("answer SDP", "err", err)
			_ = dtx.Bye(context.Background())
			s.callFailed(c, 488, "Not Acceptable Here")
			return
		}
		jsep = toJSEP(j)
	}
	s.mu.Lock()
	c.state, c.cancel = callInCall, nil
	s.mu.Unlock()
	result := map[string]any{"event": "accepted", "username": c.peerURI}
	if h := s.incomingHeaders(dtx.InviteResponse.Headers()); h != nil {
		result["headers"] = h
	}
	s.event("", c.id, result, jsep)
}

// callFailed ends a call that never started: Janus's hangup event with the SIP code and reason.
func (s *session) callFailed(c *call, code int, reason string) {
	s.log.Debug("call ended", "code", code, "reason", reason)
	if s.dropCall(c) {
		s.event("", c.id, map[string]any{"event": "hangup", "code": code, "reason": reason}, nil)
	}
}

// dropCall forgets c if it is still the session's call, closes its media and the browser's
// PeerConnection; false when c had already gone.
func (s *session) dropCall(c *call) bool {
	s.mu.Lock()
	if s.call != c {
		s.mu.Unlock()
		return false
	}
	s.call = nil
	rec, detached := s.rec, s.detached
	s.rec = nil
	s.mu.Unlock()
	c.answered()
	closeRecordings(rec)
	if c.bridge != nil {
		_ = c.bridge.Close()
	}
	if !detached { // the gateway closes a detached handle's PeerConnection itself
		s.h.ClosePeer("SIP call ended")
	}
	return true
}

// newBridge gets the handle's PeerConnection (with the bridge's codecs: PeerOptions) and joins a media bridge to it.
func (s *session) newBridge(c *call) *plugin.RequestError {
	p, err := s.h.Peer()
	if err != nil {
		return plugin.Errorf(ErrUnknown, "PeerConnection: %v", err)
	}
	cfg := s.p.bridgeConfig()
	b, err := rtpbridge.New(cfg, p, rtpbridge.Options{SRTP: c.srtp, Log: s.log})
	if err != nil {
		return plugin.Errorf(ErrIO, "Could not allocate RTP/RTCP ports")
	}
	c.bridge = b
	return nil
}

// bridgeError maps the bridge's errors onto Janus's codes.
func bridgeError(err error) *plugin.RequestError {
	switch {
	case errors.Is(err, rtpbridge.ErrNoPorts):
		return plugin.Errorf(ErrIO, "Could not allocate RTP/RTCP ports")
	case errors.Is(err, rtpbridge.ErrBadCrypto):
		return plugin.Errorf(ErrTooStrict, "%v", err)
	}
	return plugin.Errorf(ErrMissingSDP, "Error parsing SDP: %v", err)
}

// srtpMode reads the srtp element (Janus: sdes_optional or sdes_mandatory).
func srtpMode(b plugin.Body) (rtpbridge.SRTPMode, *plugin.RequestError) {
	if !b.Has("srtp") {
		return rtpbridge.SRTPOff, nil
	}
	m, err := rtpbridge.ParseSRTPMode(b.Str("srtp"))
	if err != nil || b.Str("srtp") == "" {
		return m, plugin.Errorf(ErrInvalidElement, "Invalid element (srtp can only be sdes_optional or sdes_mandatory)")
	}
	return m, nil
}

func toJSEP(d *webrtc.SessionDescription) *plugin.JSEP {
	if d == nil {
		return nil
	}
	return &plugin.JSEP{Type: d.Type.String(), SDP: d.SDP}
}
