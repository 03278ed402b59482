package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// BatteryResult is what a battery over one transport saw.
type BatteryResult struct {
	Sent     int      `json:"sent"`
	Answered int      `json:"answered"` // a Janus reply, or an HTTP 4xx for a bad URL
	Failures []string `json:"failures,omitempty"`
	// StillServes: a new session could be created and kept alive after the battery.
	StillServes bool `json:"still_serves"`
}

func (r *BatteryResult) fail(format string, args ...any) {
	if len(r.Failures) < 20 {
		r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
	}
}

// OK is every request answered and the server still serving.
func (r BatteryResult) OK() bool { return r.Sent > 0 && r.Answered == r.Sent && r.StillServes }

var httpClient = &http.Client{Timeout: 15 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// BatteryHTTP posts every case to base (e.g. http://host:8088/janus), with a live session and a
// handle on plugin substituted in. Each must be answered by a JSON object with a "janus" field, or
// by an HTTP 3xx or 4xx when its URL names nothing; a 5xx, a dropped connection or a 2xx without a Janus
// reply is a failure.
func BatteryHTTP(ctx context.Context, base, plugin string) BatteryResult {
	var r BatteryResult
	var sid, hid uint64
	for _, c := range Cases() {
		if ctx.Err() != nil {
			break
		}
		if !httpAlive(ctx, base, sid) {
			var err error
			if sid, hid, err = httpSession(ctx, base, plugin); err != nil {
				r.fail("new session: %v", err)
				break
			}
		}
		path, body := c.Expand(sid, hid)
		r.Sent++
		status, m, err := httpPost(ctx, base+path, body)
		switch {
		case err != nil:
			r.fail("%s: %v", c.Name, err)
		case status >= 500:
			r.fail("%s: HTTP %d", c.Name, status)
		case status >= 300 && c.HTTPOnly, m["janus"] != nil:
			r.Answered++
		default:
			r.fail("%s: HTTP %d without a Janus reply", c.Name, status)
		}
	}
	_, _, err := httpSession(ctx, base, plugin)
	r.StillServes = err == nil
	return r
}

func httpPost(ctx context.Context, url, body string) (int, map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m, nil
}

// httpAlive is whether session sid still exists (a keepalive is acked).
func httpAlive(ctx context.Context, base string, sid uint64) bool {
	if sid == 0 {
		return false
	}
	_, m, err := httpPost(ctx, fmt.Sprintf("%s/%d", base, sid), `{"janus":"keepalive","transaction":"alive"}`)
	return err == nil && m["janus"] == "ack"
}

// httpSession creates a session and attaches a handle to plugin.
func httpSession(ctx context.Context, base, plugin string) (sid, hid uint64, err error) {
	_, m, err := httpPost(ctx, base, `{"janus":"create","transaction":"c"}`)
	if err != nil {
		return 0, 0, err
	}
	if sid, err = dataID(m); err != nil {
		return 0, 0, err
	}
	_, m, err = httpPost(ctx, fmt.Sprintf("%s/%d", base, sid), fmt.Sprintf(`{"janus":"attach","transaction":"a","plugin":%q}`, plugin))
	if err != nil {
		return 0, 0, err
	}
	hid, err = dataID(m)
	return sid, hid, err
}

func dataID(m map[string]any) (uint64, error) {
	d, _ := m["data"].(map[string]any)
	id, ok := d["id"].(float64)
	if m["janus"] != "success" || !ok {
		return 0, fmt.Errorf("no id in %v", m)
	}
	return uint64(id), nil
}

// BatteryWS sends every case that is not about URLs over one WebSocket (url e.g.
// ws://host:8188/), with a live session and handle on plugin in the body. Each must be answered by
// a direct reply (ack, success, error, ...: not an asynchronous event) on an open socket.
func BatteryWS(ctx context.Context, url, plugin string) BatteryResult {
	var r BatteryResult
	ws, err := DialWS(ctx, url)
	if err != nil {
		r.fail("dial: %v", err)
		return r
	}
	defer ws.Close()
	var sid, hid uint64
	for _, c := range Cases() {
		if c.HTTPOnly || ctx.Err() != nil {
			continue
		}
		if sid, hid, err = wsEnsure(ws, plugin, sid, hid); err != nil {
			r.fail("new session: %v", err)
			break
		}
		_, body := c.Expand(sid, hid)
		if strings.Contains(c.Path, "SESSION") {
			body = withIDs(body, sid, hid, strings.Contains(c.Path, "HANDLE"))
		}
		r.Sent++
		if err := ws.WriteMessage(websocket.TextMessage, []byte(body)); err != nil {
			r.fail("%s: write: %v", c.Name, err)
			break
		}
		if _, err := wsReply(ws, 5*time.Second); err != nil {
			r.fail("%s: %v", c.Name, err)
			continue
		}
		r.Answered++
	}
	ws2, err := DialWS(ctx, url)
	if err == nil {
		_, _, err = wsEnsure(ws2, plugin, 0, 0)
		ws2.Close()
	}
	r.StillServes = err == nil
	return r
}

// DialWS opens a Janus API WebSocket.
func DialWS(ctx context.Context, url string) (*websocket.Conn, error) {
	d := websocket.Dialer{Subprotocols: []string{"janus-protocol"}, HandshakeTimeout: 10 * time.Second}
	ws, _, err := d.DialContext(ctx, url, nil)
	return ws, err
}

// asyncKinds are messages that are not the reply to a request.
var asyncKinds = map[string]bool{"event": true, "webrtcup": true, "media": true, "hangup": true,
	"detached": true, "slowlink": true, "timeout": true, "trickle": true}

// wsReply reads until a direct reply arrives, skipping asynchronous events.
func wsReply(ws *websocket.Conn, wait time.Duration) (map[string]any, error) {
	deadline := time.Now().Add(wait)
	for {
		_ = ws.SetReadDeadline(deadline)
		_, b, err := ws.ReadMessage()
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("reply is not a JSON object: %.80q", b)
		}
		if k, _ := m["janus"].(string); !asyncKinds[k] {
			return m, nil
		}
	}
}

// wsEnsure keeps a live session and handle on the socket: the ones given if the session answers a
// keepalive, new ones otherwise.
func wsEnsure(ws *websocket.Conn, plugin string, sid, hid uint64) (uint64, uint64, error) {
	// Late replies to earlier requests may still be on their way: wait for this one's transaction.
	call := func(req string) (map[string]any, error) {
		var m struct{ Transaction string }
		_ = json.Unmarshal([]byte(req), &m)
		if err := ws.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			return nil, err
		}
		for {
			r, err := wsReply(ws, 10*time.Second)
			if err != nil || r["transaction"] == m.Transaction {
				return r, err
			}
		}
	}
	if sid != 0 {
		if m, err := call(fmt.Sprintf(`{"janus":"keepalive","transaction":"alive","session_id":%d}`, sid)); err != nil {
			return 0, 0, err
		} else if m["janus"] == "ack" {
			return sid, hid, nil
		}
	}
	m, err := call(`{"janus":"create","transaction":"c"}`)
	if err != nil {
		return 0, 0, err
	}
	if sid, err = dataID(m); err != nil {
		return 0, 0, err
	}
	if m, err = call(fmt.Sprintf(`{"janus":"attach","transaction":"a","session_id":%d,"plugin":%q}`, sid, plugin)); err != nil {
		return 0, 0, err
	}
	hid, err = dataID(m)
	return sid, hid, err
}

// withIDs puts the ids a URL would carry into a JSON object body that has none of its own.
func withIDs(body string, sid, hid uint64, handle bool) string {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil || dec.More() {
		return body
	}
	if _, ok := m["session_id"]; !ok {
		m["session_id"] = json.RawMessage(fmt.Sprint(sid))
	}
	if _, ok := m["handle_id"]; !ok && handle {
		m["handle_id"] = json.RawMessage(fmt.Sprint(hid))
	}
	var b bytes.Buffer
	if json.NewEncoder(&b).Encode(m) != nil {
		return body
	}
	return b.String()
}
