package gateway

import (
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"reflect"
	"sort"
	"strconv"
	"time"

	"github.com/strata-rtc/strata/internal/events"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
)

// WithEvents gives the gateway an event bus (nil: no events); the gateway emits to it and answers
// query_eventhandler from its handlers. The caller closes the bus after Close.
func WithEvents(b *events.Bus) Option {
	return func(g *Gateway) { g.events = b }
}

// Events is the gateway's event bus (nil without one).
func (g *Gateway) Events() *events.Bus { return g.events }

// EmitCore emits a core event (type 256) with body, e.g. for a transport's start-up.
func (g *Gateway) EmitCore(subtype int, body any) {
	g.events.Emit(events.Event{Type: events.TypeCore, Subtype: subtype, Body: body})
}

// eventHandlerInfo is the `events` member of server_info: the handlers, as Janus lists its event
// handler plugins.
func (g *Gateway) eventHandlerInfo() map[string]any {
	out := map[string]any{}
	for _, h := range g.events.Handlers() {
		desc := "Forwards events via HTTP POST (as Janus's sample event handler)."
		if _, ws := h.(*events.WSHandler); ws {
			desc = "Forwards events via WebSockets (as Janus's wsevh)."
		}
		out[h.Name()] = map[string]any{"name": h.Name(), "author": Author, "description": desc,
			"version_string": VersionString, "version": Version}
	}
	return out
}

func (g *Gateway) emitSession(s *session, name string, withTransport bool) {
	if !g.events.Wants(events.TypeSession) {
		return
	}
	body := map[string]any{"name": name}
	if withTransport {
		if t, id := s.transportID(); t != "" {
			body["transport"] = map[string]any{"transport": t, "id": id}
		}
	}
	g.events.Emit(events.Event{Type: events.TypeSession, SessionID: s.id, Body: body})
}

// transportID names the session's transport and, as Janus does, identifies the connection (the
// sink) by a hash, never by its address.
func (s *session) transportID() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink == nil {
		return "", ""
	}
	var id uint64
	if v := reflect.ValueOf(s.sink); v.Kind() == reflect.Pointer {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v.Pointer()))
		id = maphash.Bytes(sinkSeed, b[:])
	}
	return s.sink.Transport(), strconv.FormatUint(id, 10)
}

var sinkSeed = maphash.MakeSeed()

func (h *handle) emitHandle(name string) {
	if !h.gw.events.Wants(events.TypeHandle) {
		return
	}
	body := map[string]any{"name": name, "plugin": h.plug.Package()}
	if h.opaqueID != "" {
		body["opaque_id"] = h.opaqueID
	}
	h.emit(events.TypeHandle, 0, body)
}

// emitJSEP emits a jsep event: owner is "local" (strata's description) or "remote" (the client's).
func (h *handle) emitJSEP(owner string, j *plugin.JSEP) {
	if !h.gw.events.Wants(events.TypeJSEP) {
		return
	}
	jsep := map[string]string{"type": j.Type}
	if h.gw.cfg.Events.JSEPSDP {
		jsep["sdp"] = j.SDP
	}
	h.emit(events.TypeJSEP, 0, map[string]any{"owner": owner, "jsep": jsep})
}

// emitPlugin emits a plugin event with the data of the event the plugin pushed.
func (h *handle) emitPlugin(data json.RawMessage) {
	if !h.gw.events.Wants(events.TypePlugin) {
		return
	}
	h.emit(events.TypePlugin, 0, map[string]any{"plugin": h.plug.Package(), "data": data})
}

func (h *handle) emitWebRTC(subtype int, body map[string]any) {
	if h.gw.events.Wants(events.TypeWebRTC) {
		h.emit(events.TypeWebRTC, subtype, body)
	}
}

func (h *handle) emitMedia(subtype int, body map[string]any) {
	if h.gw.events.Wants(events.TypeMedia) {
		h.emit(events.TypeMedia, subtype, body)
	}
}

func (h *handle) emit(t events.Type, subtype int, body any) {
	h.gw.events.Emit(events.Event{Type: t, Subtype: subtype, SessionID: h.sess.id, HandleID: h.id,
		OpaqueID: h.opaqueID, Body: body})
}

// statsLoop emits a media stats event per m-line of every PeerConnection each stats_period, while
// a handler wants media events.
func (g *Gateway) statsLoop(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-t.C:
			if !g.events.Wants(events.TypeMedia) {
				continue
			}
			g.mu.RLock()
			hs := make([]*handle, 0, len(g.handles))
			for _, h := range g.handles {
				if h != nil {
					hs = append(hs, h)
				}
			}
			g.mu.RUnlock()
			for _, h := range hs {
				h.emitStats()
			}
		}
	}
}

// emitStats emits one stats event per m-line of the handle's PeerConnection, if it is up; the
// members are Janus's where strata has the figure.
func (h *handle) emitStats() {
	h.mu.Lock()
	ready := h.flags.Ready
	h.mu.Unlock()
	p := h.currentPeer()
	if p == nil || p.PC == nil || !ready {
		return
	}
	media := p.Info().Media
	mids := make([]string, 0, len(media))
	for mid := range media {
		mids = append(mids, mid)
	}
	sort.Strings(mids)
	for _, mid := range mids {
		m := media[mid]
		body := map[string]any{
			"mid": m.Mid, "mindex": m.MIndex, "media": m.Type,
			"packets-received": m.In.Packets, "packets-sent": m.Out.Packets,
			"bytes-received": m.In.Bytes, "bytes-sent": m.Out.Bytes,
			"bytes-received-lastsec": m.In.Bitrate / 8, "bytes-sent-lastsec": m.Out.Bitrate / 8,
			"nacks-received": m.Out.NACKs, "nacks-sent": m.In.NACKs,
		}
		if m.Type != "data" {
			body["codec"] = m.Codec
			body["lost"] = m.In.Lost
			body["lost-by-remote"] = m.Out.Lost
			body["jitter-local"] = m.In.JitterMs
			body["rtt"] = m.Out.RTTMs
		}
		h.emitMedia(events.SubtypeMediaStats, body)
	}
}

// customEvent is the admin API's custom_event: {"schema": string, "data": object} emitted as an
// external event (type 4), as Janus does; success also when no handler takes it.
func (g *Gateway) customEvent(r adminReq) janus.Message {
	raw, ok := r.Fields["schema"]
	if !ok {
		return r.fail(janus.Missing("schema"))
	}
	var schema string
	if json.Unmarshal(raw, &schema) != nil {
		return r.fail(janus.WrongType("schema", "a string"))
	}
	data, ok := r.Fields["data"]
	if !ok {
		return r.fail(janus.Missing("data"))
	}
	if !janus.IsObject(data) {
		return r.fail(janus.WrongType("data", "an object"))
	}
	g.events.Emit(events.Event{Type: events.TypeExternal, Body: map[string]any{"schema": schema, "data": data}})
	return r.ok()
}

// queryEventHandler is the admin API's query_eventhandler: {"handler": name, "request": {...}}
// passed to the named handler, whose answer comes back as "response" (Janus's semantics: 460 for no
// such handler; the handler's own errors are inside the response).
func (g *Gateway) queryEventHandler(r adminReq) janus.Message {
	raw, ok := r.Fields["handler"]
	if !ok {
		return r.fail(janus.Missing("handler"))
	}
	var name string
	if json.Unmarshal(raw, &name) != nil {
		return r.fail(janus.WrongType("handler", "a string"))
	}
	request, hasRequest := r.Fields["request"]
	if hasRequest && !janus.IsObject(request) {
		return r.fail(janus.WrongType("request", "an object"))
	}
	h := g.events.Handler(name)
	if h == nil {
		return r.fail(janus.Errorf(janus.ErrPluginNotFound, "Invalid event handler"))
	}
	var response any
	if err := guard(func() { response = h.Query(request) }); err != nil {
		return r.fail(janus.Errorf(janus.ErrUnknown, "%v", err))
	}
	return r.ok().With("response", response)
}
