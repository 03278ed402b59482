package gateway

import (
	"context"

	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
)

// Submit processes one raw Janus API request. reply is called exactly once with the answer, either
// before Submit returns or later from another goroutine (a `message` waits for its turn at the
// plugin). Everything that decides the order of requests — decoding, validation and queueing for the
// plugin — happens before Submit returns, so a transport that calls Submit in arrival order keeps
// its client's messages in order without waiting for each answer.
//
// Events that a request causes (`detached` after a detach's `success`) are delivered to the sink
// after reply has been called, so a transport that writes replies and events to one stream keeps
// them in Janus's order.
func (g *Gateway) Submit(ctx context.Context, raw []byte, from Origin, reply func(janus.Message)) {
	req, jerr := janus.Decode(raw, janus.APIVerbs)
	// An unknown verb is answered by dispatch, which knows where the request was addressed.
	if jerr != nil && jerr.Code != janus.ErrUnknownRequest {
		reply(janus.ErrorReply(req.SessionID, req.Transaction, jerr))
		return
	}
	if jerr := resolvePath(&req, from); jerr != nil {
		reply(janus.ErrorReply(req.SessionID, req.Transaction, jerr))
		return
	}
	g.dispatch(ctx, &req, from, reply)
}

// Handle is Submit for callers that want to wait: it returns the reply.
func (g *Gateway) Handle(ctx context.Context, raw []byte, from Origin) janus.Message {
	ch := make(chan janus.Message, 1)
	g.Submit(ctx, raw, from, func(m janus.Message) { ch <- m })
	return <-ch
}

// resolvePath merges ids from the URL with ids from the body: the path wins, and a body that names
// a different session or handle is refused with 457.
func resolvePath(req *janus.Request, from Origin) *janus.Error {
	if from.PathSession != 0 {
		if req.SessionID != 0 && req.SessionID != from.PathSession {
			return janus.Errorf(janus.ErrInvalidRequestPath, "session_id %d in the body conflicts with session %d in the path", req.SessionID, from.PathSession)
		}
		req.SessionID = from.PathSession
	}
	if from.PathHandle != 0 {
		if req.HandleID != 0 && req.HandleID != from.PathHandle {
			return janus.Errorf(janus.ErrInvalidRequestPath, "handle_id %d in the body conflicts with handle %d in the path", req.HandleID, from.PathHandle)
		}
		req.HandleID = from.PathHandle
	}
	return nil
}

// dispatch routes a decoded request in Janus's order (janus.c, janus_process_incoming_request). At
// the root only info, ping and create exist, and any other verb, known or not, is 457. Below the root
// the credentials, the session (458) and the handle (459) are checked first; then a verb of the other
// level is 457 and a verb Janus does not have there at all (info, ping and create included) is 453.
func (g *Gateway) dispatch(ctx context.Context, req *janus.Request, from Origin, reply func(janus.Message)) {
	fail := func(e *janus.Error) { reply(janus.ErrorReply(req.SessionID, req.Transaction, e)) }
	if req.SessionID == 0 {
		if req.HandleID != 0 {
			fail(janus.NoSessionForHandle())
			return
		}
		g.rootVerb(req, from, reply)
		return
	}
	if !from.Trusted && !g.Authorized(req.APISecret, req.Token) {
		fail(errUnauthorized())
		return
	}
	s := g.session(req.SessionID)
	if s == nil {
		fail(errNoSession(req.SessionID))
		return
	}
	s.touch()
	if req.HandleID == 0 {
		g.sessionVerb(ctx, s, req, from, reply)
		return
	}
	h := g.handle(req.HandleID)
	if h == nil || h.sess != s {
		fail(errNoHandle(req.SessionID, req.HandleID))
		return
	}
	g.handleVerb(h, req, from, reply)
}

func (g *Gateway) rootVerb(req *janus.Request, from Origin, reply func(janus.Message)) {
	switch req.Janus {
	case "info":
		reply(g.ServerInfo(req.Transaction))
	case "ping":
		reply(janus.Message{Janus: "pong", Transaction: req.Transaction})
	case "create":
		if !from.Trusted && !g.Authorized(req.APISecret, req.Token) {
			reply(janus.ErrorReply(0, req.Transaction, errUnauthorized()))
			return
		}
		reply(g.create(req, from))
	default:
		reply(janus.ErrorReply(0, req.Transaction, janus.WrongPath(req.Verb)))
	}
}

// sessionVerb answers a verb addressed to a session. keepalive and claim are valid at a handle's
// path too (Janus does not check the level for them); they are shared with handleVerb.
func (g *Gateway) sessionVerb(ctx context.Context, s *session, req *janus.Request, from Origin, reply func(janus.Message)) {
	switch req.Janus {
	case "keepalive", "claim":
		g.anyLevelVerb(s, req, from, reply)
	case "destroy":
		g.destroySession(s, false)
		reply(success(s.id, req.Transaction))
	case "attach":
		reply(g.attach(ctx, s, req))
	case "detach", "hangup", "message", "trickle":
		reply(janus.ErrorReply(s.id, req.Transaction, janus.WrongPath(req.Verb)))
	default:
		reply(janus.ErrorReply(s.id, req.Transaction, janus.UnknownVerb(req.Verb)))
	}
}

func (g *Gateway) handleVerb(h *handle, req *janus.Request, from Origin, reply func(janus.Message)) {
	switch req.Janus {
	case "keepalive", "claim":
		g.anyLevelVerb(h.sess, req, from, reply)
	case "message":
		g.message(h, req, reply)
	case "trickle":
		reply(g.trickle(h, req))
	case "hangup":
		reply(success(h.sess.id, req.Transaction))
		g.hangup(h, "Janus API")
	case "detach":
		h.detach("Detach", true, func() { reply(success(h.sess.id, req.Transaction)) })
	case "attach", "destroy":
		reply(janus.ErrorReply(h.sess.id, req.Transaction, janus.WrongPath(req.Verb)))
	default:
		reply(janus.ErrorReply(h.sess.id, req.Transaction, janus.UnknownVerb(req.Verb)))
	}
}

func (g *Gateway) anyLevelVerb(s *session, req *janus.Request, from Origin, reply func(janus.Message)) {
	switch req.Janus {
	case "keepalive":
		reply(janus.Message{Janus: "ack", SessionID: s.id, Transaction: req.Transaction})
	case "claim":
		if !s.claim(from.Sink) {
			reply(janus.ErrorReply(s.id, req.Transaction, errNoSession(s.id)))
			return
		}
		reply(success(s.id, req.Transaction))
	}
}

func errUnauthorized() *janus.Error {
	return janus.Errorf(janus.ErrUnauthorized, "Unauthorized request (wrong or missing secret/token)")
}

func success(sid uint64, tx string) janus.Message {
	return janus.Message{Janus: "success", SessionID: sid, Transaction: tx}
}

// hangup closes the handle's PeerConnection (the `hangup` event and MediaClosed follow from its
// hook). Without one, the plugin is still told, as Janus tells it.
func (g *Gateway) hangup(h *handle, reason string) {
	if p := h.currentPeer(); p != nil {
		p.Close(reason)
		return
	}
	h.pluginCall(func(ps plugin.Session) { ps.MediaClosed(reason) })
}
