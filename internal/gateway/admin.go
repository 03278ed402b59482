package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
)

// adminReq carries one admin request through its handler.
type adminReq struct {
	*janus.Request
	s *session
	h *handle
}

func (r adminReq) fail(e *janus.Error) janus.Message {
	return janus.ErrorReply(r.SessionID, r.Transaction, e)
}

func (r adminReq) ok() janus.Message {
	return janus.Message{Janus: "success", SessionID: r.SessionID, Transaction: r.Transaction}
}

// Admin processes one admin API request. Ids come from the body or from from's path ids (the path
// wins; a conflict is 457). Every request except info and ping at the root needs admin_secret when
// one is configured (403).
//
// The order is Janus's (janus.c, janus_process_incoming_admin_request): at the root, info and ping,
// then the secret; below it, a handle without a session (458), the secret, the session (458) and the
// handle (459). Only then is the verb looked at, and a verb that does not exist at that level, known
// elsewhere or not at all, is 457: the admin API has no 453.
func (g *Gateway) Admin(ctx context.Context, raw []byte, from Origin) janus.Message {
	decoded, jerr := janus.Decode(raw, janus.AdminVerbs)
	r := adminReq{Request: &decoded}
	if jerr != nil && jerr.Code != janus.ErrUnknownRequest {
		return r.fail(jerr)
	}
	if jerr := resolvePath(r.Request, from); jerr != nil {
		return r.fail(jerr)
	}
	if r.SessionID == 0 && r.HandleID == 0 {
		switch r.Janus {
		case "info":
			return g.ServerInfo(r.Transaction)
		case "ping":
			return janus.Message{Janus: "pong", Transaction: r.Transaction}
		}
	}
	if r.SessionID == 0 && r.HandleID != 0 {
		return r.fail(janus.NoSessionForHandle())
	}
	if secret := g.cfg.Transports.Admin.AdminSecret; secret != "" && r.AdminSecret != secret {
		return r.fail(errUnauthorized())
	}
	switch {
	case r.SessionID == 0:
		return g.adminRootVerb(ctx, r)
	case r.HandleID == 0:
		if r.s = g.session(r.SessionID); r.s == nil {
			return r.fail(errNoSession(r.SessionID))
		}
		return g.adminSessionVerb(r)
	default:
		if r.s = g.session(r.SessionID); r.s == nil {
			return r.fail(errNoSession(r.SessionID))
		}
		if r.h = g.handle(r.HandleID); r.h == nil || r.h.sess != r.s {
			return r.fail(errNoHandle(r.SessionID, r.HandleID))
		}
		return g.adminHandleVerb(r)
	}
}

func (g *Gateway) adminRootVerb(ctx context.Context, r adminReq) janus.Message {
	switch r.Janus {
	case "add_token", "list_tokens", "remove_token", "allow_token", "disallow_token":
		return g.tokenVerb(r)
	case "get_status":
		return r.ok().With("status", g.status())
	case "list_sessions":
		return r.ok().With("sessions", g.sessionIDs())
	case "set_session_timeout":
		return g.setSessionTimeout(r)
	case "set_log_level":
		return g.setLogLevel(r)
	case "accept_new_sessions":
		return g.setAcceptNewSessions(r)
	case "message_plugin":
		return g.messagePlugin(ctx, r)
	case "query_eventhandler":
		return g.queryEventHandler(r)
	case "custom_event":
		return g.customEvent(r)
	case "cluster", "drain":
		return g.clusterVerb(ctx, r)
	}
	return r.fail(janus.WrongPath(r.Verb))
}

func (g *Gateway) adminSessionVerb(r adminReq) janus.Message {
	switch r.Janus {
	case "list_handles":
		ids := r.s.handleIDs()
		slices.Sort(ids)
		return r.ok().With("handles", ids)
	case "destroy_session":
		g.destroySession(r.s, false)
		return r.ok()
	}
	return r.fail(janus.WrongPath(r.Verb))
}

func (g *Gateway) adminHandleVerb(r adminReq) janus.Message {
	switch r.Janus {
	case "handle_info":
		return r.ok().With("handle_id", r.h.id).With("info", g.handleInfo(r.h))
	case "detach_handle":
		done := make(chan struct{})
		r.h.detach("Admin API", true, func() { close(done) })
		<-done
		return r.ok().With("handle_id", r.h.id)
	case "hangup_webrtc":
		g.hangup(r.h, "Admin API")
		return r.ok().With("handle_id", r.h.id)
	case "start_pcap":
		return g.startPcap(r)
	case "stop_pcap":
		return g.stopPcap(r)
	}
	return r.fail(janus.WrongPath(r.Verb))
}

func (g *Gateway) status() map[string]any {
	return map[string]any{
		"token_auth":              g.cfg.General.TokenAuth,
		"api_secret":              g.cfg.General.APISecret != "",
		"session_timeout":         int(g.SessionTimeout().Seconds()),
		"reclaim_session_timeout": int(g.cfg.General.ReclaimSessionTimeout.Seconds()),
		"candidates_timeout":      candidatesTimeout,
		"log_level":               janusLogLevel(g.level.Level()),
		"accepting_new_sessions":  g.acceptNew.Load(),
		"full_trickle":            g.cfg.Media.ICE.FullTrickle,
		"sessions":                g.SessionCount(),
		"dropped_events":          g.dropped.Load(),
		"uptime":                  int(time.Since(g.started).Seconds()),
	}
}

func (g *Gateway) sessionIDs() []uint64 {
	g.mu.RLock()
	ids := make([]uint64, 0, len(g.sessions))
	for id := range g.sessions {
		ids = append(ids, id)
	}
	g.mu.RUnlock()
	slices.Sort(ids)
	return ids
}

// intParam reads a mandatory integer parameter in [min, max].
func intParam(r adminReq, name string, min, max int64) (int64, *janus.Error) {
	raw, ok := r.Fields[name]
	if !ok {
		return 0, janus.Missing(name)
	}
	var v int64
	if json.Unmarshal(raw, &v) != nil || v < min || v > max {
		return 0, janus.Errorf(janus.ErrInvalidElementType, "Invalid element type (%s should be an integer between %d and %d)", name, min, max)
	}
	return v, nil
}

func (g *Gateway) setSessionTimeout(r adminReq) janus.Message {
	secs, jerr := intParam(r, "timeout", 0, 1<<31-1)
	if jerr != nil {
		return r.fail(jerr)
	}
	g.sessionTimeout.Store(int64(time.Duration(secs) * time.Second))
	return r.ok().With("timeout", secs)
}

// Janus log levels run from 0 (none) to 7 (debug); slog's are spaced by 4 with Info at 0.
func slogLevel(janusLevel int64) slog.Level {
	switch {
	case janusLevel <= 1:
		return slog.LevelError + 4 // nothing but the fatal
	case janusLevel == 2:
		return slog.LevelError
	case janusLevel == 3:
		return slog.LevelWarn
	case janusLevel == 4:
		return slog.LevelInfo
	case janusLevel < 7:
		return slog.LevelDebug
	default:
		return slog.LevelDebug - 4 // Pion's trace output too
	}
}

func janusLogLevel(l slog.Level) int {
	switch {
	case l > slog.LevelError:
		return 1
	case l > slog.LevelWarn:
		return 2
	case l > slog.LevelInfo:
		return 3
	case l > slog.LevelDebug:
		return 4
	case l > slog.LevelDebug-4:
		return 5
	default:
		return 7
	}
}

func (g *Gateway) setLogLevel(r adminReq) janus.Message {
	level, jerr := intParam(r, "level", 0, 7)
	if jerr != nil {
		return r.fail(jerr)
	}
	g.level.Set(slogLevel(level))
	return r.ok().With("level", level)
}

func (g *Gateway) setAcceptNewSessions(r adminReq) janus.Message {
	raw, ok := r.Fields["accept"]
	if !ok {
		return r.fail(janus.Missing("accept"))
	}
	var accept bool
	if json.Unmarshal(raw, &accept) != nil {
		return r.fail(janus.WrongType("accept", "a boolean"))
	}
	g.acceptNew.Store(accept)
	return r.ok().With("accept", accept)
}

// messagePlugin passes {"plugin":..., "request":{...}} to a plugin's AdminMessage.
func (g *Gateway) messagePlugin(ctx context.Context, r adminReq) janus.Message {
	if _, ok := r.Fields["plugin"]; !ok {
		return r.fail(janus.Missing("plugin"))
	}
	request, ok := r.Fields["request"]
	if !ok {
		return r.fail(janus.Missing("request"))
	}
	if !janus.IsObject(request) {
		return r.fail(janus.WrongType("request", "an object"))
	}
	p, ok := g.plugins[r.Plugin]
	if !ok {
		return r.fail(janus.Errorf(janus.ErrPluginNotFound, "No such plugin '%s'", r.Plugin))
	}
	am, ok := p.(plugin.AdminMessenger)
	if !ok {
		return r.fail(janus.Errorf(janus.ErrPluginMessage, "Plugin '%s' does not handle admin messages", r.Plugin))
	}
	var response any
	if err := guard(func() { response = am.AdminMessage(ctx, request) }); err != nil {
		return r.fail(janus.Errorf(janus.ErrPluginMessage, "%v", err))
	}
	raw, err := json.Marshal(response)
	if err != nil {
		return r.fail(janus.Errorf(janus.ErrPluginMessage, "Plugin response cannot be encoded: %v", err))
	}
	return r.ok().With("response", json.RawMessage(raw))
}
