// Package adminapi serves the Janus admin API over HTTP POST at base, base/<s> and base/<s>/<h>, and
// GET base/info (Janus's admin_http on port 7088, path /admin). The verbs themselves are the
// gateway's (gateway.Admin); this package only moves bytes and sets HTTP statuses and CORS headers.
package adminapi

import (
	"net/http"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/transport"
)

// Handler serves the admin API. Create it with New.
type Handler struct {
	gw      *gateway.Gateway
	base    string
	cors    string
	maxBody int64
}

// New returns the admin API handler for gw, at cfg.Transports.Admin.BasePath (default /admin), with
// cfg.General.MaxMessageBytes as the body limit and the admin API's own CORS origin
// (cfg.Transports.Admin.CORSOrigin; empty, the default, sends no CORS headers, so a web page on
// another origin cannot read admin replies). The admin secret is the gateway's
// (cfg.Transports.Admin.AdminSecret).
func New(gw *gateway.Gateway, cfg *config.Config) *Handler {
	h := &Handler{gw: gw, base: cfg.Transports.Admin.BasePath, cors: cfg.Transports.Admin.CORSOrigin,
		maxBody: cfg.General.MaxMessageBytes}
	if h.base == "" {
		h.base = "/admin"
	}
	return h
}

// ServeHTTP implements http.Handler.
//
// GETs are answered as Janus's janus_http_admin_handler answers them: GET base/info is the server
// info (Janus's admin demo page asks for it first, and connects only if it gets it); the admin API
// has no long-poll, so any other GET is error 454 "Request payload missing", with HTTP 200. A POST
// to base/info is error 450: that endpoint is GET only.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok, jerr := transport.ParsePath(h.base, r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	transport.CORS(w, r, h.cors)
	switch {
	case r.Method == http.MethodOptions:
		w.WriteHeader(http.StatusOK)
		return
	case r.Method == http.MethodGet:
		h.get(w, p, jerr)
		return
	case r.Method != http.MethodPost:
		transport.MethodNotAllowed(w, r, "GET, POST, OPTIONS")
		return
	case jerr != nil:
		transport.WriteError(w, transport.PathErrorStatus(jerr), 0, jerr)
		return
	case p.Info:
		transport.WriteError(w, http.StatusOK, 0, janus.Errorf(janus.ErrTransportSpecific, "Use GET for the info endpoint"))
		return
	}
	body, err := transport.ReadBody(w, r, h.maxBody)
	if err == transport.ErrTooLarge {
		transport.WriteError(w, http.StatusRequestEntityTooLarge, p.Session, transport.TooLarge(h.maxBody))
		return
	}
	if err != nil {
		transport.WriteError(w, http.StatusBadRequest, p.Session, janus.Errorf(janus.ErrTransportSpecific, "Cannot read request: %v", err))
		return
	}
	m := h.gw.Admin(r.Context(), body, gateway.Origin{PathSession: p.Session, PathHandle: p.Handle})
	transport.WriteJSON(w, http.StatusOK, janus.Encode(m)) // errors too, as Janus
}

func (h *Handler) get(w http.ResponseWriter, p transport.Path, jerr *janus.Error) {
	switch {
	case p.Info:
		transport.WriteJSON(w, http.StatusOK, janus.Encode(h.gw.ServerInfo(transport.RandomTransaction())))
	case jerr != nil && jerr.Code == janus.ErrInvalidRequestPath: // more than base/<s>/<h>: Janus's 404 too
		transport.WriteError(w, http.StatusNotFound, 0, jerr)
	default:
		// Janus does not look at the ids of a GET: with no payload there is no request to route.
		transport.WriteError(w, http.StatusOK, 0, janus.Errorf(janus.ErrInvalidJSON, "Request payload missing"))
	}
}
