package transport

import (
	"net/http"
	"slices"

	"github.com/gorilla/websocket"
)

// Upgrade completes a WebSocket handshake that asks for subprotocol, and refuses (HTTP 400) one
// that is not a WebSocket upgrade or does not offer the subprotocol, as Janus refuses them. It
// returns nil when the handshake did not complete (the client has its answer).
func Upgrade(w http.ResponseWriter, r *http.Request, u *websocket.Upgrader, subprotocol string) *websocket.Conn {
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "expected a WebSocket upgrade with subprotocol "+subprotocol, http.StatusBadRequest)
		return nil
	}
	if !slices.Contains(websocket.Subprotocols(r), subprotocol) {
		http.Error(w, "subprotocol "+subprotocol+" required", http.StatusBadRequest)
		return nil
	}
	ws, err := u.Upgrade(w, r, nil)
	if err != nil {
		return nil // the upgrader has answered
	}
	return ws
}
