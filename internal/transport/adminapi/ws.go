package adminapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/transport"
)

// Subprotocol is the WebSocket subprotocol admin clients must request (Janus's admin_ws).
const Subprotocol = "janus-admin-protocol"

// WSTransportName is the Janus package name under which the admin WebSocket is listed in `info`
// (Janus lists one package per transport plugin; its WebSocket plugin serves both APIs).
const WSTransportName = "janus.transport.websockets.admin"

const (
	wsPingInterval = 30 * time.Second
	wsWriteTimeout = 10 * time.Second
	// messages up to this many times max_message_bytes are read and refused with 450; larger ones
	// close the connection, as on the Janus API's WebSocket.
	wsHardLimitFactor = 4
)

// WSHandler serves the admin API over WebSocket: each text message is one admin request, answered
// on the same socket in order (the admin API has no events). The verbs, admin_secret and errors are
// the gateway's, exactly as over HTTP; ids are in the body. Create it with NewWS.
type WSHandler struct {
	gw       *gateway.Gateway
	maxBytes int64
	upgrader websocket.Upgrader
	log      *slog.Logger

	mu    sync.Mutex
	conns map[*websocket.Conn]context.CancelFunc
}

// NewWS returns the admin WebSocket handler for gw, with cfg.General.MaxMessageBytes as the message
// limit, and lists it in gw's `info`.
func NewWS(gw *gateway.Gateway, cfg *config.Config) *WSHandler {
	h := &WSHandler{gw: gw, maxBytes: cfg.General.MaxMessageBytes, log: gw.Logger().With("transport", "admin_websocket"),
		conns: make(map[*websocket.Conn]context.CancelFunc)}
	h.upgrader = websocket.Upgrader{
		Subprotocols: []string{Subprotocol},
		// No browser page should drive the admin API unless the operator said so: the same origin
		// rule as the admin HTTP API's CORS (an empty cors_origin allows only non-browser clients and
		// same-host pages).
		CheckOrigin: func(r *http.Request) bool { return checkOrigin(r, cfg.Transports.Admin.CORSOrigin) },
	}
	gw.RegisterTransport(WSTransportName, plugin.Info{
		Name: "strata admin WebSocket transport", Author: gateway.Author, VersionString: gateway.VersionString,
		Version: gateway.Version, Description: "Janus admin API over WebSocket (janus-admin-protocol)",
	})
	return h
}

// checkOrigin accepts a handshake without an Origin header (a program), one from the page's own host,
// and one from the configured admin origin ("*": any).
func checkOrigin(r *http.Request, allowed string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || allowed == "*" || (allowed != "" && origin == allowed) {
		return true
	}
	return origin == "http://"+r.Host || origin == "https://"+r.Host
}

// ServeHTTP implements http.Handler: handshakes without the janus-admin-protocol subprotocol are
// refused (HTTP 400), as Janus refuses them.
func (h *WSHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws := transport.Upgrade(w, r, &h.upgrader, Subprotocol)
	if ws == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.mu.Lock()
	h.conns[ws] = cancel
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.conns, ws)
		h.mu.Unlock()
		cancel()
		ws.Close()
	}()
	h.serve(ctx, ws)
}

// serve reads requests and writes their replies, one at a time, pinging an idle client.
func (h *WSHandler) serve(ctx context.Context, ws *websocket.Conn) {
	var wmu sync.Mutex
	write := func(typ int, b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		_ = ws.SetWriteDeadline(time.Now().Add(wsWriteTimeout))
		return ws.WriteMessage(typ, b)
	}
	go func() {
		t := time.NewTicker(wsPingInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if write(websocket.PingMessage, nil) != nil {
					ws.Close()
					return
				}
			}
		}
	}()
	ws.SetReadLimit(h.maxBytes * wsHardLimitFactor)
	for {
		_, r, err := ws.NextReader()
		if err != nil {
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, h.maxBytes+1))
		if err != nil {
			return
		}
		var m janus.Message
		if int64(len(data)) > h.maxBytes {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return
			}
			m = janus.ErrorReply(0, "", transport.TooLarge(h.maxBytes))
		} else {
			m = h.gw.Admin(ctx, data, gateway.Origin{})
		}
		if err := write(websocket.TextMessage, janus.Encode(m)); err != nil {
			h.log.Debug("admin WebSocket write failed", "err", err)
			return
		}
	}
}

// Close closes every open admin WebSocket.
func (h *WSHandler) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ws, cancel := range h.conns {
		cancel()
		ws.Close()
	}
}
