package janusclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/gorilla/websocket"
)

// Subprotocol is the WebSocket subprotocol of the Janus API.
const Subprotocol = "janus-protocol"

// wsTransport is Janus's WebSocket API: requests carry session_id and handle_id in the body, and
// every reply and event arrives on the socket.
type wsTransport struct {
	conn     *websocket.Conn
	dispatch func(*Event)
	wmu      sync.Mutex
	done     chan struct{}
}

func dialWS(ctx context.Context, url string, dispatch func(*Event), lost func()) (*wsTransport, error) {
	d := websocket.Dialer{Subprotocols: []string{Subprotocol}}
	conn, resp, err := d.DialContext(ctx, url, nil)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("janusclient: WebSocket %s: HTTP %d: %w", url, resp.StatusCode, err)
		}
		return nil, fmt.Errorf("janusclient: WebSocket %s: %w", url, err)
	}
	if conn.Subprotocol() != Subprotocol {
		_ = conn.Close()
		return nil, fmt.Errorf("janusclient: server did not accept the %s subprotocol", Subprotocol)
	}
	t := &wsTransport{conn: conn, dispatch: dispatch, done: make(chan struct{})}
	go t.read(lost)
	return t, nil
}

// read dispatches every message until the socket ends, then reports the loss.
func (t *wsTransport) read(lost func()) {
	defer close(t.done)
	defer lost()
	for {
		_, raw, err := t.conn.ReadMessage()
		if err != nil {
			return
		}
		evs, err := decodeEvents(raw)
		if err != nil {
			continue
		}
		for _, ev := range evs {
			t.dispatch(ev)
		}
	}
}

func (t *wsTransport) send(_ context.Context, sessionID, handleID uint64, msg map[string]any) (*Event, error) {
	if sessionID != 0 {
		msg["session_id"] = sessionID
	}
	if handleID != 0 {
		msg["handle_id"] = handleID
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	select {
	case <-t.done:
		return nil, ErrClosed
	default:
	}
	if err := t.conn.WriteMessage(websocket.TextMessage, raw); err != nil {
		return nil, err
	}
	return nil, nil
}

func (t *wsTransport) startSession(uint64) {}
func (t *wsTransport) stopSession(uint64)  {}

func (t *wsTransport) close() error {
	t.wmu.Lock()
	_ = t.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	t.wmu.Unlock()
	return t.conn.Close()
}
