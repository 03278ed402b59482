// Package whip serves WHIP (RFC 9725) on the HTTP listener: a client POSTs an SDP offer to
// /whip/endpoint/<room> and publishes into that videoroom; the resource it gets back takes trickled
// candidates and ICE restarts (PATCH) and ends with DELETE. See docs/WHIP.md.
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
	"strconv"
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

const (
	endpointPath = "/whip/endpoint/"
	resourcePath = "/whip/resource/"
	sdpType      = "application/sdp"
	fragType     = "application/trickle-ice-sdpfrag"
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

	stop chan struct{}
	done chan struct{}
}

// resource is one WHIP session: a Janus session with one videoroom handle.
type resource struct {
	id       string
	sid, hid uint64
	room     uint64

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

// Close stops the keepalive; the gateway destroys the sessions.
func (h *Handler) Close() {
	close(h.stop)
	<-h.done
}

// ServeHTTP routes /whip/endpoint/<room> and /whip/resource/<id>.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.cors(w, r)
	switch {
	case strings.HasPrefix(r.URL.Path, endpointPath):
		h.endpoint(w, r, strings.TrimPrefix(r.URL.Path, endpointPath))
	case strings.HasPrefix(r.URL.Path, resourcePath):
		h.resource(w, r, strings.TrimPrefix(r.URL.Path, resourcePath))
	default:
		httpError(w, http.StatusNotFound, "no such WHIP endpoint")
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

func (h *Handler) endpoint(w http.ResponseWriter, r *http.Request, room string) {
	switch r.Method {
	case http.MethodOptions:
		// A CORS preflight carries no credentials, so it is answered without them (RFC 9725 4.4).
		w.Header().Set("Accept-Post", sdpType)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		h.publish(w, r, room)
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		httpError(w, http.StatusMethodNotAllowed, "a WHIP endpoint takes POST")
	}
}

func (h *Handler) resource(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method == http.MethodOptions {
		w.Header().Set("Accept-Patch", fragType)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodPatch && r.Method != http.MethodDelete {
		w.Header().Set("Allow", "PATCH, DELETE, OPTIONS")
		httpError(w, http.StatusMethodNotAllowed, "a WHIP resource takes PATCH and DELETE")
		return
	}
	if !h.authorized(w, r) {
		return
	}
	h.mu.Lock()
	res := h.resources[id]
	h.mu.Unlock()
	if res == nil {
		httpError(w, http.StatusNotFound, "no such WHIP resource")
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
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	bearer = strings.TrimSpace(bearer)
	var pass bool
	if want := h.cfg.Transports.HTTP.WHIP.Token; want != "" {
		pass = ok && subtle.ConstantTimeCompare([]byte(bearer), []byte(want)) == 1
	} else {
		pass = h.janus.gw.Authorized(bearer, bearer)
	}
	if !pass {
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		httpError(w, http.StatusUnauthorized, "missing or invalid bearer token")
	}
	return pass
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

// publish answers POST /whip/endpoint/<room>: a new videoroom publisher with the client's offer.
func (h *Handler) publish(w http.ResponseWriter, r *http.Request, roomStr string) {
	if !h.authorized(w, r) {
		return
	}
	room, err := strconv.ParseUint(roomStr, 10, 64)
	if err != nil || room == 0 {
		httpError(w, http.StatusNotFound, "no such room: room ids are numbers")
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
	res, answer, err := h.join(ctx, r, room, offer)
	if err != nil {
		status, why := statusOf(err)
		httpError(w, status, why)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", sdpType)
	hd.Set("Location", resourcePath+res.id)
	hd.Set("ETag", res.etag)
	hd.Set("Accept-Patch", fragType)
	for _, l := range h.iceLinks() {
		hd.Add("Link", l)
	}
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, answer)
}

// join creates the session, attaches the videoroom and sends joinandconfigure with the offer, as
// simple-whip-server does over the Janus API. Any failure destroys the session again.
func (h *Handler) join(ctx context.Context, r *http.Request, room uint64, offer string) (*resource, string, error) {
	from := gateway.Origin{RemoteAddr: r.RemoteAddr}
	created, err := h.janus.call(ctx, from, map[string]any{"janus": "create"})
	if err != nil {
		return nil, "", err
	}
	res := &resource{id: randomID(), sid: created.Data.ID, room: room, offer: offer}
	h.mu.Lock()
	h.resources[res.id], h.bySession[res.sid] = res, res
	h.mu.Unlock()
	answer, err := h.attachAndPublish(ctx, res, offer, r.URL.Query().Get("display"))
	if err != nil {
		h.end(res)
		return nil, "", err
	}
	return res, answer, nil
}

func (h *Handler) attachAndPublish(ctx context.Context, res *resource, offer, display string) (string, error) {
	attached, err := h.janus.call(ctx, gateway.Origin{}, map[string]any{"janus": "attach", "session_id": res.sid,
		"plugin": "janus.plugin.videoroom", "opaque_id": "whip-" + res.id})
	if err != nil {
		return "", err
	}
	res.hid = attached.Data.ID
	if display == "" {
		display = "WHIP publisher"
	}
	ev, err := h.janus.call(ctx, gateway.Origin{}, map[string]any{"janus": "message", "session_id": res.sid, "handle_id": res.hid,
		"body": map[string]any{"request": "joinandconfigure", "ptype": "publisher", "room": res.room, "display": display},
		"jsep": map[string]any{"type": "offer", "sdp": offer}})
	if err != nil {
		return "", err
	}
	if ev.JSEP == nil || ev.JSEP.Type != "answer" {
		return "", &pluginError{Code: 500, Reason: "the videoroom sent no answer"}
	}
	res.etag = etagOf(ev.JSEP.SDP)
	return ev.JSEP.SDP, nil
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
	case pe.Core && pe.Code == 472: // not accepting sessions, or the sessions limits
		return http.StatusServiceUnavailable, pe.Reason
	case pe.Core && (pe.Code == 465 || pe.Code == 464):
		return http.StatusBadRequest, pe.Reason
	case pe.Core:
		return http.StatusInternalServerError, pe.Reason
	}
	switch pe.Code {
	case 426: // no such room
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
