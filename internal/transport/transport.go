// Package transport holds what the Janus API's HTTP-based transports share: parsing
// /base/<session>/<handle> paths, CORS headers, bounded request bodies and JSON replies. The
// transports themselves live in the subpackages httpapi (REST and long-poll), wsapi (WebSocket) and
// adminapi (admin API over HTTP).
package transport

import (
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/janus"
)

// Path is a request path split relative to a transport's base path.
type Path struct {
	// Session and Handle are the ids in the path (0 when absent).
	Session uint64
	Handle  uint64
	// Info is true for base/info.
	Info bool
}

// ParsePath splits urlPath below base ("/janus"). ok is false when the path is not below base at
// all; a path below base that is not /info, /<s> or /<s>/<h> with numeric ids gives a Janus error
// (458/459 for an id that is not a positive integer, 457 for anything else).
func ParsePath(base, urlPath string) (p Path, ok bool, jerr *janus.Error) {
	base = strings.TrimRight(base, "/")
	if urlPath != base && !strings.HasPrefix(urlPath, base+"/") {
		return p, false, nil
	}
	rest := strings.Trim(strings.TrimPrefix(urlPath, base), "/")
	if rest == "" {
		return p, true, nil
	}
	parts := strings.Split(rest, "/")
	if len(parts) == 1 && parts[0] == "info" {
		p.Info = true
		return p, true, nil
	}
	if len(parts) > 2 {
		return p, true, janus.Errorf(janus.ErrInvalidRequestPath, "Invalid path %q", urlPath)
	}
	if p.Session, jerr = parseID(parts[0], janus.ErrSessionNotFound, "session"); jerr != nil {
		return p, true, jerr
	}
	if len(parts) == 2 {
		if p.Handle, jerr = parseID(parts[1], janus.ErrHandleNotFound, "handle"); jerr != nil {
			return p, true, jerr
		}
	}
	return p, true, nil
}

func parseID(s string, code janus.Code, what string) (uint64, *janus.Error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, janus.Errorf(code, "Invalid %s '%s'", what, s)
	}
	return id, nil
}

// CORS writes the CORS headers when origin is set: Allow-Origin, the methods, and the request's own
// Access-Control-Request-Headers echoed back (as Janus does).
func CORS(w http.ResponseWriter, r *http.Request, origin string) {
	if origin == "" {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	if origin != "*" {
		h.Add("Vary", "Origin")
	}
}

// ErrTooLarge is returned by ReadBody for a body over the limit.
var ErrTooLarge = errors.New("request body too large")

// ReadBody reads a request body of at most max bytes.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, ErrTooLarge
	}
	return body, err
}

// TooLarge is the Janus error for a message over max_message_bytes.
func TooLarge(max int64) *janus.Error {
	return janus.Errorf(janus.ErrTransportSpecific, "Message too large (limit %d bytes)", max)
}

// WriteJSON writes one Janus message (or a slice of them) as the reply.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// WriteError writes a Janus error envelope with an HTTP status.
func WriteError(w http.ResponseWriter, status int, sessionID uint64, jerr *janus.Error) {
	WriteJSON(w, status, janus.Encode(janus.ErrorReply(sessionID, "", jerr)))
}

// MethodNotAllowed answers a method the endpoint does not serve.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	WriteError(w, http.StatusMethodNotAllowed, 0,
		janus.Errorf(janus.ErrTransportSpecific, "Method %s not allowed here", r.Method))
}

// PathErrorStatus is the HTTP status of a POST whose path ParsePath refused: 404 for a path with
// too many parts (Janus's HTTP transport refuses those itself), 200 for a session or handle id
// that is not a number (Janus's core answers those, like every other request error, with 200).
func PathErrorStatus(jerr *janus.Error) int {
	if jerr.Code == janus.ErrInvalidRequestPath {
		return http.StatusNotFound
	}
	return http.StatusOK
}

// RandomTransaction is the transaction of a reply to a request that came without one (GET
// base/info): Janus makes up 11 random letters and digits, and clients may expect the member.
func RandomTransaction() string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 11)
	for i := range b {
		b[i] = chars[rand.IntN(len(chars))]
	}
	return string(b)
}
