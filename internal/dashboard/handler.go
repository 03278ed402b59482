// Package dashboard serves the admin dashboard: a page on the admin listener showing the sessions,
// the plugins' rooms and participants, and per-PeerConnection bitrate, estimate, layers, loss and
// RTT as live charts, with the network controller's view when the videoroom has one. The page and
// its script are embedded (no CDN, no library); the data comes from /dashboard/data, a JSON
// snapshot that needs the admin secret as a bearer token.
package dashboard

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
)

// Path is where the admin listeners serve the dashboard.
const Path = "/dashboard"

//go:embed assets
var assets embed.FS

// contentTypes of the embedded assets, by name.
var contentTypes = map[string]string{
	"index.html": "text/html; charset=utf-8",
	"app.js":     "text/javascript; charset=utf-8",
	"style.css":  "text/css; charset=utf-8",
	// An icon of its own, so the browser's request for one is not a 404 in the console.
	"favicon.svg": "image/svg+xml",
}

// Handler serves Path and below.
type Handler struct {
	secret string
	mu     sync.Mutex // one snapshot at a time: they share the rate tracker
	b      builder
}

// New makes the handler. secret is the admin secret the data endpoint requires (never empty:
// the server generates one when the configuration leaves it out).
func New(gw Gateway, plugins []plugin.Plugin, secret string) *Handler {
	return &Handler{secret: secret, b: builder{gw: gw, plugins: plugins, rates: newRateTracker(), now: time.Now}}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The page may only load what it embeds and talk to its own origin.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, Path), "/")
	switch name {
	case "":
		name = "index.html"
	case "data":
		h.serveData(w, r)
		return
	}
	h.serveAsset(w, name)
}

func (h *Handler) serveAsset(w http.ResponseWriter, name string) {
	ct, ok := contentTypes[name]
	if !ok {
		http.NotFound(w, nil)
		return
	}
	body, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(body)
}

func (h *Handler) serveData(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if status, reason := h.authorize(r); status != 0 {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="strata admin"`)
		}
		http.Error(w, reason, status)
		return
	}
	h.mu.Lock()
	snap := h.b.snapshot()
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(snap)
}

// authorize checks the bearer token against the admin secret in constant time: 0 when it
// matches, else the status and its reason.
func (h *Handler) authorize(r *http.Request) (int, string) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return http.StatusUnauthorized, "the dashboard data needs the admin secret: Authorization: Bearer <admin_secret>"
	}
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return http.StatusUnauthorized, "Authorization must be a Bearer token (the admin secret)"
	}
	if h.secret == "" || subtle.ConstantTimeCompare([]byte(token), []byte(h.secret)) != 1 {
		return http.StatusForbidden, "wrong admin secret"
	}
	return 0, ""
}
