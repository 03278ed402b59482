// Package whip serves WHIP (RFC 9725) and WHEP on the HTTP listener: a client POSTs an SDP offer to
// /whip/endpoint/<room> and publishes into that videoroom, or to /whep/endpoint/<room>[/<publisher>]
// and watches a publisher of it; the resource it gets back takes trickled candidates and ICE
// restarts (PATCH) and ends with DELETE. See docs/WHIP.md.
package whip

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pion/sdp/v3"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
)

// TransportName is the Janus-style package name the admin API shows for WHIP sessions.
const TransportName = "janus.transport.whip"

// The two protocols, as the first element of their paths.
const (
	WHIP = "whip"
	WHEP = "whep"
)

const (
	sdpType  = "application/sdp"
	fragType = "application/trickle-ice-sdpfrag"
	// callTimeout bounds one request through the plugin (an offer waits for candidate gathering).
	callTimeout = 30 * time.Second
)

// Handler is the WHIP HTTP handler and the owner of every WHIP resource.
type Handler struct {
	cfg    config.Config
	log    *slog.Logger
	janus  *janusClient
	maxSDP int64

	mu        sync.Mutex
	resources map[string]*resource // by the id in the resource URL
	bySession map[uint64]*resource

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// resource is one WHIP or WHEP session: a Janus session with one plugin handle.
type resource struct {
	kind     string // WHIP or WHEP
	id       string
	sid, hid uint64
	room     uint64
	// token is the client's bearer when it is a Janus API token (no WHIP token configured): the
	// attach carries it, so that a token limited to some plugins is held to them here too.
	token string

	// restart is the plugin request that carries an ICE restart's offer (nil: videoroom configure).
	restart map[string]any

	mu    sync.Mutex // serialises PATCHes: an ICE restart rewrites offer and etag
	offer string     // the client's last offer, the base of an ICE restart from an sdpfrag
	etag  string
}

// New makes the handler and starts the keepalive of its sessions.
func New(gw *gateway.Gateway, cfg config.Config, log *slog.Logger) *Handler {
	h := &Handler{cfg: cfg, log: log, maxSDP: int64(cfg.General.MaxMessageBytes),
		resources: map[string]*resource{}, bySession: map[uint64]*resource{},
		stop: make(chan struct{}), done: make(chan struct{})}
	h.janus = &janusClient{gw: gw, waiters: map[string]chan janus.Message{}, ended: h.ended}
	gw.RegisterTransport(TransportName, plugin.Info{Name: "WHIP transport", Author: "strata",
		Description: "WHIP (RFC 9725) into the videoroom", VersionString: "1.0.0", Version: 1})
	go h.keepalive(gw)
	return h
}

// keepalive touches every resource's session: WHIP clients send nothing once media flows, and their
// sessions must not time out while the PeerConnection lives (its end ends the resource).
func (h *Handler) keepalive(gw *gateway.Gateway) {
	defer close(h.done)
	every := max(gw.SessionTimeout()/3, time.Second)
	if gw.SessionTimeout() == 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			h.mu.Lock()
			for sid := range h.bySession {
				_ = gw.Touch(sid)
			}
			h.mu.Unlock()
		}
	}
}

// Close stops the keepalive; the gateway destroys the sessions. It may be called more than once (a
// server whose Start failed is closed again by its owner).
func (h *Handler) Close() {
	h.stopOnce.Do(func() { close(h.stop) })
	<-h.done
}

// ServeHTTP routes /{whip,whep}/endpoint/<target> and /{whip,whep}/resource/<id>.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.cors(w, r)
	kind, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	what, target, _ := strings.Cut(rest, "/")
	switch {
	case kind != WHIP && kind != WHEP:
		httpError(w, http.StatusNotFound, "not a WHIP or WHEP path")
	case what == "endpoint":
		h.endpoint(w, r, kind, target)
	case what == "resource":
		h.resource(w, r, kind, target)
	default:
		httpError(w, http.StatusNotFound, "no such "+strings.ToUpper(kind)+" endpoint")
	}
}

// cors answers browsers on other origins (a WHIP page served elsewhere): the headers WHIP uses
// must be allowed in and the ones it answers with exposed, or a page cannot read Location.
func (h *Handler) cors(w http.ResponseWriter, r *http.Request) {
	origin := h.cfg.Transports.HTTP.CORSOrigin
	if origin == "" {
		return
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Set("Access-Control-Expose-Headers", "Location, ETag, Link, Accept-Patch, Accept-Post")
	if r.Method == http.MethodOptions {
		hd.Set("Access-Control-Allow-Methods", "POST, PATCH, DELETE, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match")
		hd.Set("Access-Control-Max-Age", "86400")
	}
	if origin != "*" {
		hd.Add("Vary", "Origin")
	}
}

func (h *Handler) endpoint(w http.ResponseWriter, r *http.Request, kind, target string) {
	switch r.Method {
	case http.MethodOptions:
		// A CORS preflight carries no credentials, so it is answered without them (RFC 9725 4.4).
		w.Header().Set("Accept-Post", sdpType)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		h.create(w, r, kind, target)
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		httpError(w, http.StatusMethodNotAllowed, "an endpoint takes POST")
	}
}

func (h *Handler) resource(w http.ResponseWriter, r *http.Request, kind, id string) {
	if r.Method == http.MethodOptions {
		w.Header().Set("Accept-Patch", fragType)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodPatch && r.Method != http.MethodDelete {
		w.Header().Set("Allow", "PATCH, DELETE, OPTIONS")
		httpError(w, http.StatusMethodNotAllowed, "a resource takes PATCH and DELETE")
		return
	}
	if !h.authorized(w, r) {
		return
	}
	h.mu.Lock()
	res := h.resources[id]
	h.mu.Unlock()
	if res == nil || res.kind != kind {
		httpError(w, http.StatusNotFound, "no such resource")
		return
	}
	if r.Method == http.MethodDelete {
		h.end(res)
		w.WriteHeader(http.StatusOK)
		return
	}
	h.patch(w, r, res)
}

// authorized checks the bearer token: transports.http.whip.token when set, otherwise the Janus
// API's own credentials (api_secret or one of the tokens of token_auth), so a server whose API
// needs a secret does not publish to anyone over WHIP. 401 tells the client to authenticate.
func (h *Handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	bearer := bearerOf(r)
	var pass bool
	if want := h.cfg.Transports.HTTP.WHIP.Token; want != "" {
		pass = bearer != "" && subtle.ConstantTimeCompare([]byte(bearer), []byte(want)) == 1
	} else {
		pass = h.janus.gw.Authorized(bearer, bearer)
	}
	if !pass {
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		httpError(w, http.StatusUnauthorized, "missing or invalid bearer token")
	}
	return pass
}

// bearerOf is the request's bearer token ("" without one).
func bearerOf(r *http.Request) string {
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(bearer)
}

// readBody checks the Content-Type and reads a body of at most maxSDP bytes.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, want string) (string, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != want {
		httpError(w, http.StatusUnsupportedMediaType, "Content-Type must be "+want)
		return "", false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxSDP))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		httpError(w, http.StatusRequestEntityTooLarge, "body over general.max_message_bytes")
		return "", false
	case err != nil:
		httpError(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return "", false
	}
	return string(b), true
}

// checkOffer refuses what is not an SDP offer with media before any session exists.
func checkOffer(body string) string {
	var d sdp.SessionDescription
	if err := d.UnmarshalString(body); err != nil {
		return "not an SDP: " + err.Error()
	}
	if len(d.MediaDescriptions) == 0 {
		return "the SDP has no media"
	}
	return ""
}

// create answers POST on an endpoint: a new videoroom publisher (WHIP) or subscriber (WHEP) with
// the client's offer, 201 with the answer.
func (h *Handler) create(w http.ResponseWriter, r *http.Request, kind, target string) {
	if !h.authorized(w, r) {
		return
	}
	t, err := parseTarget(kind, target)
	if err != nil {
		httpError(w, http.StatusNotFound, err.Error())
		return
	}
	offer, ok := h.readBody(w, r, sdpType)
	if !ok {
		return
	}
	if why := checkOffer(offer); why != "" {
		httpError(w, http.StatusBadRequest, why)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	res, answer, err := h.open(ctx, r, kind, t, offer)
	if err != nil {
		status, why := statusOf(err)
		httpError(w, status, why)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", sdpType)
	hd.Set("Location", "/"+kind+"/resource/"+res.id)
	hd.Set("ETag", res.etag)
	hd.Set("Accept-Patch", fragType)
	for _, l := range h.iceLinks() {
		hd.Add("Link", l)
	}
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, answer)
}

// open creates the session, attaches the plugin and sends the offer with the plugin's own request,
// as simple-whip-server and simple-whep-server do over the Janus API. Any failure destroys the
// session again.
func (h *Handler) open(ctx context.Context, r *http.Request, kind string, t target, offer string) (*resource, string, error) {
	from := gateway.Origin{RemoteAddr: r.RemoteAddr}
	created, err := h.janus.call(ctx, from, map[string]any{"janus": "create"})
	if err != nil {
		return nil, "", err
	}
	res := &resource{kind: kind, id: randomID(), sid: created.Data.ID, room: t.room, offer: offer}
	if h.cfg.Transports.HTTP.WHIP.Token == "" {
		res.token = bearerOf(r)
	}
	h.mu.Lock()
	h.resources[res.id], h.bySession[res.sid] = res, res
	h.mu.Unlock()
	var answer string
	if kind == WHIP {
		answer, err = h.publish(ctx, res, offer, r.URL.Query().Get("display"))
	} else {
		answer, err = h.watch(ctx, res, t, offer)
	}
	if err != nil {
		h.end(res)
		return nil, "", err
	}
	res.etag = etagOf(answer)
	return res, answer, nil
}

// attach attaches the resource's session to a plugin.
func (h *Handler) attach(ctx context.Context, res *resource, plugin string) error {
	req := map[string]any{"janus": "attach", "session_id": res.sid, "plugin": plugin, "opaque_id": res.kind + "-" + res.id}
	if res.token != "" {
		req["token"] = res.token
	}
	attached, err := h.janus.call(ctx, gateway.Origin{}, req)
	if err != nil {
		return err
	}
	res.hid = attached.Data.ID
	return nil
}

// message sends a plugin request with the client's offer and returns the plugin's answer.
func (h *Handler) message(ctx context.Context, res *resource, body map[string]any, offer string) (string, error) {
	ev, err := h.janus.call(ctx, gateway.Origin{}, map[string]any{"janus": "message", "session_id": res.sid, "handle_id": res.hid,
		"body": body, "jsep": map[string]any{"type": "offer", "sdp": offer}})
	if err != nil {
		return "", err
	}
	if ev.JSEP == nil || ev.JSEP.Type != "answer" {
		return "", &pluginError{Code: 500, Reason: "the plugin sent no answer"}
	}
	if !acceptsMedia(ev.JSEP.SDP) {
		// Janus's way is to answer with every m-line refused (port 0); to a WHIP or WHEP client,
		// which has nothing else to do with the PeerConnection, that is a refusal.
		return "", &pluginError{Code: http.StatusUnprocessableEntity, Reason: "none of the offered media can be used (codecs?)", Core: true}
	}
	return ev.JSEP.SDP, nil
}

// acceptsMedia reports whether an answer accepted at least one audio or video m-line.
func acceptsMedia(answer string) bool {
	var d sdp.SessionDescription
	if d.UnmarshalString(answer) != nil {
		return false
	}
	for _, m := range d.MediaDescriptions {
		if m.MediaName.Port.Value != 0 && (m.MediaName.Media == "audio" || m.MediaName.Media == "video") {
			return true
		}
	}
	return false
}

// publish joins the videoroom as a publisher with the offer (joinandconfigure).
func (h *Handler) publish(ctx context.Context, res *resource, offer, display string) (string, error) {
	if err := h.attach(ctx, res, "janus.plugin.videoroom"); err != nil {
		return "", err
	}
	if display == "" {
		display = "WHIP publisher"
	}
	return h.message(ctx, res, map[string]any{"request": "joinandconfigure", "ptype": "publisher", "room": res.room, "display": display}, offer)
}

// ended is the janusClient's report that a resource's session or PeerConnection went away.
func (h *Handler) ended(sid uint64, why string) {
	h.mu.Lock()
	res := h.bySession[sid]
	h.mu.Unlock()
	if res != nil {
		h.log.Debug("WHIP resource ended", "resource", res.id, "why", why)
		h.end(res)
	}
}

// end forgets a resource and destroys its session (the publisher leaves the room). Idempotent.
func (h *Handler) end(res *resource) {
	h.mu.Lock()
	_, live := h.resources[res.id]
	delete(h.resources, res.id)
	delete(h.bySession, res.sid)
	h.mu.Unlock()
	if !live {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = h.janus.call(ctx, gateway.Origin{}, map[string]any{"janus": "destroy", "session_id": res.sid})
}

// iceLinks are the Link headers giving the server's STUN and TURN servers (RFC 9725 4.6), so a
// client behind a NAT uses the same ones the server does.
func (h *Handler) iceLinks() []string {
	var ls []string
	ice := h.cfg.Media.ICE
	for _, u := range ice.STUNServers {
		ls = append(ls, "<"+u+`>; rel="ice-server"`)
	}
	for _, t := range ice.TURNServers {
		for _, u := range t.URLs {
			l := "<" + u + `>; rel="ice-server"`
			if t.Username != "" {
				l += `; username="` + quote(t.Username) + `"; credential="` + quote(t.Credential) + `"; credential-type="password"`
			}
			ls = append(ls, l)
		}
	}
	return ls
}

func quote(s string) string { return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) }

// statusOf maps a gateway or videoroom refusal onto the HTTP status RFC 9725 clients expect.
func statusOf(err error) (int, string) {
	var pe *pluginError
	if !errors.As(err, &pe) {
		return http.StatusInternalServerError, err.Error()
	}
	switch {
	case pe.Core && pe.Code == int(janus.ErrUnauthorized):
		return http.StatusUnauthorized, pe.Reason
	case pe.Core && pe.Code == int(janus.ErrUnauthorizedPlugin): // a token limited to other plugins
		return http.StatusForbidden, pe.Reason
	case pe.Core && pe.Code == 472: // not accepting sessions, or the sessions limits
		return http.StatusServiceUnavailable, pe.Reason
	case pe.Core && (pe.Code == 465 || pe.Code == 464):
		return http.StatusBadRequest, pe.Reason
	case pe.Core && pe.Code == http.StatusUnprocessableEntity:
		return pe.Code, pe.Reason
	case pe.Core:
		return http.StatusInternalServerError, pe.Reason
	}
	if pe.Plugin == "janus.plugin.streaming" {
		switch pe.Code {
		case 455: // no such mountpoint
			return http.StatusNotFound, pe.Reason
		case 457: // the mountpoint's pin
			return http.StatusForbidden, pe.Reason
		case 452, 454: // an offer the mountpoint cannot answer
			return http.StatusUnprocessableEntity, pe.Reason
		}
		return http.StatusInternalServerError, pe.Reason
	}
	switch pe.Code {
	case 426, 428: // no such room, no such feed (publisher)
		return http.StatusNotFound, pe.Reason
	case 433: // the room's pin or allowed list
		return http.StatusForbidden, pe.Reason
	case 432: // the room's publishers, or participants_per_room
		return http.StatusServiceUnavailable, pe.Reason
	case 437, 431, 429, 430: // an offer the room cannot take (codecs, no media it accepts)
		return http.StatusUnprocessableEntity, pe.Reason
	}
	return http.StatusInternalServerError, pe.Reason
}

// httpError writes a plain-text reason with the status.
func httpError(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, reason+"\n")
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// etagOf names one ICE session of a resource: it changes with each ICE restart (RFC 9725 4.3.1).
func etagOf(answer string) string {
	ufrag, _ := iceCredentials(answer)
	if ufrag == "" {
		ufrag = randomID()
	}
	return `"` + ufrag + `"`
}
