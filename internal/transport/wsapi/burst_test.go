package wsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/config"
)

// burstSize is the burst on one socket that lost replies before backpressure (issue 12). It takes a
// few seconds under the race detector too.
const burstSize = 10000

type envelope struct {
	Janus       string `json:"janus"`
	Transaction string `json:"transaction"`
}

// TestBurstGetsEveryReply: a client sends a burst of requests on one socket as fast as it can —
// messages to a plugin, keepalives and infos — while reading continuously. Every request gets
// exactly one reply. With the default send queue the messages are asynchronous (an ack, then an
// event from a plugin goroutine, which must come too); with a send queue so small that the server
// pauses reading all the time they are answered by the handle's worker ("sync"), so that only
// replies fill the queue.
func TestBurstGetsEveryReply(t *testing.T) {
	for _, tc := range []struct {
		queue  int
		body   string
		events int
	}{
		{1024, `{}`, (burstSize + 2) / 3},
		{8, `{"request":"sync"}`, 0},
	} {
		t.Run(fmt.Sprint("send_queue=", tc.queue), func(t *testing.T) {
			e := newEnv(t, func(c *config.Config) { c.Transports.WebSocket.SendQueue = tc.queue })
			c := e.dial()
			sid, hid := c.session()
			sendErr := make(chan error, 1)
			go func() { sendErr <- sendBurst(c.ws, sid, hid, tc.body) }()

			replies := map[string]int{}
			events, want := 0, burstSize+tc.events
			for got := 0; got < want; got++ {
				_ = c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, data, err := c.ws.ReadMessage()
				if err != nil {
					t.Fatalf("after %d of %d messages: %v", got, want, err)
				}
				var m envelope
				if err := json.Unmarshal(data, &m); err != nil {
					t.Fatalf("not a JSON object: %s", data)
				}
				if m.Janus == "event" {
					events++
				} else {
					replies[m.Transaction]++
				}
			}
			if err := <-sendErr; err != nil {
				t.Fatal(err)
			}
			for i := range burstSize {
				if tx := fmt.Sprint("t", i); replies[tx] != 1 {
					t.Fatalf("request %s answered %d times", tx, replies[tx])
				}
			}
			if events != tc.events || strings.Contains(e.logs.String(), "level=WARN") {
				t.Fatalf("%d plugin events, want %d; log:\n%s", events, tc.events, e.logs.String())
			}
		})
	}
}

// sendBurst writes burstSize requests without waiting for any answer: every third a message with
// body to the echo plugin, then a keepalive, then an info.
func sendBurst(ws *websocket.Conn, sid, hid uint64, body string) error {
	for i := range burstSize {
		var req string
		switch i % 3 {
		case 0:
			req = fmt.Sprintf(`{"janus":"message","transaction":"t%d","session_id":%d,"handle_id":%d,"body":%s}`, i, sid, hid, body)
		case 1:
			req = fmt.Sprintf(`{"janus":"keepalive","transaction":"t%d","session_id":%d}`, i, sid)
		default:
			req = fmt.Sprintf(`{"janus":"info","transaction":"t%d"}`, i)
		}
		_ = ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if err := ws.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
	}
	return nil
}

// TestClientThatDoesNotReadIsCutOff: a client stops reading while its plugin pushes large events.
// Its socket fills, the events pile up past the bound, and within send_timeout the server closes
// the connection with a log line; the session goes as on any close, nothing is left running, and
// other clients are served. Reading at last, the client finds the close frame (1008) after what
// was in flight: the writer left room for it (Linux; elsewhere it may see the TCP connection end).
func TestClientThatDoesNotReadIsCutOff(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.Transports.WebSocket.SendQueue = 4
		c.Transports.WebSocket.SendTimeout = 300 * time.Millisecond
	})
	baseline := runtime.NumGoroutine()
	c := e.dial()
	sid, hid := c.session()
	big := strings.Repeat("x", 64<<10)
	// Up to 64 MB: more than the socket buffers of both ends hold.
	for i := range 1024 {
		if err := e.echo.Session(hid).Push(map[string]any{"seq": i, "pad": big}); err != nil {
			break // the connection was cut off and the handle detached
		}
	}
	waitGone(t, e, sid, -1) // its socket lingers until the client reads (sockroom.go)
	if !strings.Contains(e.logs.String(), "closing WebSocket: client not reading its messages") {
		t.Fatalf("no log line for the cut-off:\n%s", e.logs.String())
	}
	// The client, reading at last, gets what was in flight and then the end of the connection.
	code, text := readUntilClosed(t, c.ws)
	if code == CloseNotReading && !strings.HasPrefix(text, "not reading") && !strings.HasPrefix(text, "took nothing") {
		t.Fatalf("close 1008 with reason %q", text)
	}
	if code != CloseNotReading && (runtime.GOOS == "linux" || code >= 0 && code != websocket.CloseAbnormalClosure) {
		// On Linux the writer keeps room for the close frame in the socket (sockroom.go).
		t.Fatalf("closed with %d %q, want %d", code, text, CloseNotReading)
	}
	t.Logf("the client saw: %d %q", code, text)
	_ = c.ws.Close()
	waitGone(t, e, sid, baseline)
	other := e.dial()
	if m := other.call(`{"janus":"ping","transaction":"p"}`); m["janus"] != "pong" {
		t.Fatalf("server stopped serving: %v", m)
	}
}

// TestCutOffSendsTheCloseCode: when the client's socket still has room, the client being cut off
// (as an event refused by an overfull outbox asks) learns why: close 1008 with a reason.
func TestCutOffSendsTheCloseCode(t *testing.T) {
	e := newEnv(t, nil)
	baseline := runtime.NumGoroutine()
	c := e.dial()
	sid, _ := c.session()
	sc := e.serverConn()
	sc.cutOnce.Do(func() { close(sc.cut) })
	code, text := readUntilClosed(t, c.ws)
	if code != CloseNotReading || text != "not reading: 0 messages waiting" {
		t.Fatalf("closed with %d %q, want %d", code, text, CloseNotReading)
	}
	_ = c.ws.Close()
	waitGone(t, e, sid, baseline)
	if !strings.Contains(e.logs.String(), `msg="closing WebSocket: client not reading its messages" transport=websocket remote=`) {
		t.Fatalf("no log line for the cut-off:\n%s", e.logs.String())
	}
}

// serverConn is the server's side of the one open connection.
func (e *env) serverConn() *conn {
	e.t.Helper()
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	if len(e.h.conns) != 1 {
		e.t.Fatalf("%d connections open, want 1", len(e.h.conns))
	}
	for c := range e.h.conns {
		return c
	}
	return nil
}

// readUntilClosed reads until the connection ends and returns the close code (-1 without a close
// frame) and text.
func readUntilClosed(t *testing.T, ws *websocket.Conn) (int, string) {
	t.Helper()
	for {
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _, err := ws.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Text
		}
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the server did not close the connection")
		}
		return -1, err.Error()
	}
}

// waitGone waits until the server has let go of the connection: its session destroyed, the
// connection untracked, and the goroutines back to what they were before it (not checked when
// goroutines is negative).
func waitGone(t *testing.T, e *env, sid uint64, goroutines int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.gw.HasSession(sid) || e.h.Conns() > 0 || (goroutines >= 0 && runtime.NumGoroutine() > goroutines) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: session alive %v, %d connections, %d goroutines (%d before)",
				e.gw.HasSession(sid), e.h.Conns(), runtime.NumGoroutine(), goroutines)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
