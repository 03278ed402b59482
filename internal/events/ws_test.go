package events

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsCollector is a WebSocket backend: it refuses handshakes while refusing is set, requires the
// subprotocol, records every event it receives with the connection it came on, and can cut the
// current connection.
type wsCollector struct {
	srv      *httptest.Server
	refusing atomic.Bool
	refused  atomic.Int64
	mu       sync.Mutex
	conns    []*websocket.Conn
	events   []map[string]any
	connOf   []int
}

func newWSCollector(t *testing.T) *wsCollector {
	c := &wsCollector{}
	up := websocket.Upgrader{Subprotocols: []string{WSSubprotocol}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.refusing.Load() {
			c.refused.Add(1)
			http.Error(w, "not now", http.StatusServiceUnavailable)
			return
		}
		if !strings.Contains(r.Header.Get("Sec-WebSocket-Protocol"), WSSubprotocol) {
			t.Errorf("subprotocol %q", r.Header.Get("Sec-WebSocket-Protocol"))
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		c.mu.Lock()
		id := len(c.conns)
		c.conns = append(c.conns, conn)
		c.mu.Unlock()
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			var evs []map[string]any
			if msg[0] == '[' {
				_ = json.Unmarshal(msg, &evs)
			} else {
				var ev map[string]any
				_ = json.Unmarshal(msg, &ev)
				evs = append(evs, ev)
			}
			c.mu.Lock()
			for _, ev := range evs {
				c.events = append(c.events, ev)
				c.connOf = append(c.connOf, id)
			}
			c.mu.Unlock()
		}
	}))
	t.Cleanup(func() {
		c.cut()
		c.srv.Close()
	})
	return c
}

func (c *wsCollector) url() string { return "ws" + strings.TrimPrefix(c.srv.URL, "http") }

func (c *wsCollector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// cut closes the server's side of the latest connection.
func (c *wsCollector) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.conns); n > 0 {
		c.conns[n-1].Close()
	}
}

// TestWSBackendReconnects: events wait while the server refuses the handshake, arrive once it
// accepts, and after the server drops the connection the handler reconnects and goes on, with
// nothing lost and in order.
func TestWSBackendReconnects(t *testing.T) {
	c := newWSCollector(t)
	c.refusing.Store(true)
	o := Options{Name: WSPackage, URL: c.url(), Mask: Mask(TypeSession | TypeWebRTC), Grouping: false,
		Backoff: 2 * time.Millisecond, Queue: 100, Timeout: 2 * time.Second}
	h, err := NewWS(o, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(time.Second)
	b := NewBus("strata", []Handler{h}, quiet())
	emit := func(n int) { b.Emit(Event{Type: TypeSession, SessionID: 5, Body: map[string]int{"n": n}}) }
	for n := range 10 {
		emit(n)
	}
	b.Emit(Event{Type: TypeMedia, SessionID: 5}) // not in the mask
	waitFor(t, "refused handshakes", 5*time.Second, func() bool { return c.refused.Load() >= 2 })
	if st := h.Stats(); st.Sent != 0 || *st.Connected {
		t.Fatalf("while refused: %+v", st)
	}
	c.refusing.Store(false)
	waitFor(t, "the first 10 events", 10*time.Second, func() bool { return c.count() == 10 })
	if !*h.Stats().Connected {
		t.Error("not connected")
	}

	c.cut()
	waitFor(t, "the handler to see the cut", 5*time.Second, func() bool { return !*h.Stats().Connected })
	for n := 10; n < 20; n++ {
		emit(n)
	}
	waitFor(t, "the next 10 events", 10*time.Second, func() bool { return c.count() == 20 })
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ev := range c.events {
		if n := int(ev["event"].(map[string]any)["n"].(float64)); n != i || ev["type"].(float64) != 1 {
			t.Fatalf("event %d: %v", i, ev)
		}
	}
	if c.connOf[0] != 0 || c.connOf[19] != 1 {
		t.Errorf("connections %v, want the first events on the first, the last on the second", c.connOf)
	}
	if st := h.Stats(); st.Sent != 20 || st.Dropped != 0 || st.Lost != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestWSQuery(t *testing.T) {
	h, err := NewWS(Options{Name: WSPackage, URL: "ws://127.0.0.1:1/", Mask: MaskAll, Backoff: time.Second,
		Queue: 10, Timeout: time.Second}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(0)
	for req, want := range map[string]string{
		`{"request":"tweak","events":"sessions"}`:           `{"result":200}`,
		`{"request":"tweak","backend":"http://x/"}`:         `{"error":"Invalid WebSocket URI 'http://x/'","error_code":413}`,
		`{"request":"tweak","backend_user":"u"}`:            `{"error":"Invalid element (backend_user and backend_pwd are for HTTP backends)","error_code":413}`,
		`{"request":"tweak","backend":"ws://127.0.0.1:2/"}`: `{"result":200}`,
	} {
		got, _ := json.Marshal(h.Query(json.RawMessage(req)))
		if string(got) != want {
			t.Errorf("%s: %s, want %s", req, got, want)
		}
	}
	if h.Mask() != Mask(TypeSession) {
		t.Errorf("mask %v after the tweak", h.Mask())
	}
	if _, err := NewWS(Options{Name: "x", URL: "http://127.0.0.1/", Backoff: 1, Queue: 1, Timeout: 1}, quiet()); err == nil {
		t.Error("an http:// URL for a WebSocket handler accepted")
	}
}
