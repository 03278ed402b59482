package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
)

// evhBackend is an HTTP event handler backend that records the events it is posted.
type evhBackend struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []map[string]any
}

func newEvhBackend(t *testing.T) *evhBackend {
	b := &evhBackend{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var evs []map[string]any
		if err := json.Unmarshal(body, &evs); err != nil {
			t.Errorf("not a grouped POST: %s", body)
		}
		b.mu.Lock()
		b.got = append(b.got, evs...)
		b.mu.Unlock()
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// find returns the index of the first event from index from on that matches, or -1.
func (b *evhBackend) find(from int, match func(ev, body map[string]any) bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := from; i < len(b.got); i++ {
		body, _ := b.got[i]["event"].(map[string]any)
		if match(b.got[i], body) {
			return i
		}
	}
	return -1
}

func evType(ev map[string]any, typ, subtype int) bool {
	st, _ := ev["subtype"].(float64)
	return ev["type"] == float64(typ) && int(st) == subtype
}

// TestEventHandlersThroughAnEchotestCall runs a real server whose event handlers are an HTTP backend
// and a WebSocket one that cannot be reached: the server serves regardless, and a whole echotest
// call gives the backend its session, handle, jsep, webrtc, media, plugin and core events, in order,
// with the call's ids; query_eventhandler reports both handlers' counters.
func TestEventHandlersThroughAnEchotestCall(t *testing.T) {
	backend := newEvhBackend(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "ws://" + ln.Addr().String() + "/"
	ln.Close()
	cfg := testConfig(t)
	cfg.Media.ICE.Interfaces = []string{"lo"}
	cfg.Events.StatsPeriod = 200 * time.Millisecond
	cfg.Events.Handlers = []config.EventHandler{
		{Type: "http", URL: backend.srv.URL + "/events"},
		{Type: "websocket", URL: unreachable},
	}
	srv := startServer(t, cfg)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, "http://"+srv.HTTPAddr()+"/janus")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.AttachOpaque(ctx, "janus.plugin.echotest", "evh-test")
	if err != nil {
		t.Fatal(err)
	}
	b := newEchoBrowser(t)
	ev, err := h.Message(ctx, map[string]any{"audio": true, "video": true}, &janusclient.JSEP{Type: "offer", SDP: b.offer(t)})
	if err != nil || ev.JSEP == nil {
		t.Fatalf("offer: %v %v", ev, err)
	}
	if err := b.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ev.JSEP.SDP}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, h, "webrtcup", func(e *janusclient.Event) bool { return e.Janus == "webrtcup" })
	stop := make(chan struct{})
	go b.sendMedia(stop)
	waitEvent(t, h, "media receiving video", func(e *janusclient.Event) bool {
		return e.Janus == "media" && e.Type == "video" && e.Receiving != nil && *e.Receiving
	})
	deadline := time.Now().Add(10 * time.Second)
	for backend.find(0, func(ev, _ map[string]any) bool { return evType(ev, 32, 3) }) < 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	if err := h.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, h, "hangup", func(e *janusclient.Event) bool { return e.Janus == "hangup" })
	if err := h.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sess.Destroy(ctx); err != nil {
		t.Fatal(err)
	}

	// The expected events, in this order (others may come between them), except that those marked
	// with "also" may come before the one listed just before them.
	steps := []struct {
		what  string
		match func(ev, body map[string]any) bool
	}{
		{"core started", func(ev, body map[string]any) bool { return evType(ev, 256, 1) && body["status"] == "started" }},
		{"session created", func(ev, body map[string]any) bool { return evType(ev, 1, 0) && body["name"] == "created" }},
		{"handle attached", func(ev, body map[string]any) bool {
			return evType(ev, 2, 0) && body["name"] == "attached" && body["plugin"] == "janus.plugin.echotest"
		}},
		{"remote offer", func(ev, body map[string]any) bool {
			j, _ := body["jsep"].(map[string]any)
			return evType(ev, 8, 0) && body["owner"] == "remote" && j["type"] == "offer" && strings.HasPrefix(j["sdp"].(string), "v=0")
		}},
		{"local answer", func(ev, body map[string]any) bool {
			j, _ := body["jsep"].(map[string]any)
			return evType(ev, 8, 0) && body["owner"] == "local" && j["type"] == "answer"
		}},
		{"plugin event", func(ev, body map[string]any) bool {
			return evType(ev, 64, 0) && body["plugin"] == "janus.plugin.echotest" && body["data"] != nil
		}},
		{"ice connected", func(ev, body map[string]any) bool { return evType(ev, 16, 1) && body["ice"] == "connected" }},
		{"also dtls connected", func(ev, body map[string]any) bool { return evType(ev, 16, 5) && body["dtls"] == "connected" }},
		{"webrtcup", func(ev, body map[string]any) bool { return evType(ev, 16, 6) && body["connection"] == "webrtcup" }},
		{"media receiving", func(ev, body map[string]any) bool { return evType(ev, 32, 1) && body["receiving"] == true }},
		{"also media stats", func(ev, body map[string]any) bool {
			return evType(ev, 32, 3) && body["mid"] != nil && body["packets-received"] != nil
		}},
		{"hangup", func(ev, body map[string]any) bool { return evType(ev, 16, 6) && body["connection"] == "hangup" }},
		{"handle detached", func(ev, body map[string]any) bool { return evType(ev, 2, 0) && body["name"] == "detached" }},
		{"session destroyed", func(ev, body map[string]any) bool { return evType(ev, 1, 0) && body["name"] == "destroyed" }},
	}
	at, start := 0, 0
	for _, s := range steps {
		if !strings.HasPrefix(s.what, "also ") {
			start = at
		}
		var i int
		deadline := time.Now().Add(10 * time.Second)
		for i = backend.find(start, s.match); i < 0 && time.Now().Before(deadline); i = backend.find(start, s.match) {
			time.Sleep(20 * time.Millisecond)
		}
		if i < 0 {
			backend.mu.Lock()
			raw, _ := json.Marshal(backend.got[start:])
			backend.mu.Unlock()
			t.Fatalf("no %s event after event %d; from there: %s", s.what, start, raw)
		}
		at = max(at, i)
	}
	backend.mu.Lock()
	for i, ev := range backend.got {
		typ := ev["type"].(float64)
		if typ == 256 || typ == 1 {
			continue
		}
		if uint64(ev["session_id"].(float64)) != sess.ID || uint64(ev["handle_id"].(float64)) != h.ID || ev["opaque_id"] != "evh-test" {
			t.Errorf("event %d has the wrong ids: %v (session %d, handle %d)", i, ev, sess.ID, h.ID)
		}
		if ev["emitter"] != cfg.General.ServerName {
			t.Errorf("event %d emitter %v", i, ev["emitter"])
		}
	}
	backend.mu.Unlock()

	admin := "http://" + srv.AdminAddr() + "/admin"
	q := func(handler, request string) map[string]any {
		return post(t, admin, fmt.Sprintf(`{"janus":"query_eventhandler","transaction":"q","admin_secret":%q,"handler":%q,"request":%s}`,
			testAdminSecret, handler, request))
	}
	r := q("janus.eventhandler.sampleevh", `{"request":"stats"}`)
	st, _ := r["response"].(map[string]any)["stats"].(map[string]any)
	if r["janus"] != "success" || st["sent"].(float64) < float64(len(steps)) || st["dropped"].(float64) != 0 {
		t.Errorf("sampleevh stats: %v", r)
	}
	r = q("janus.eventhandler.wsevh", `{"request":"stats"}`)
	st, _ = r["response"].(map[string]any)["stats"].(map[string]any)
	if r["janus"] != "success" || st["sent"].(float64) != 0 || st["connected"] != false {
		t.Errorf("wsevh stats: %v", r)
	}
	if r := q("janus.eventhandler.nope", `{}`); r["janus"] != "error" || r["error"].(map[string]any)["code"].(float64) != 460 {
		t.Errorf("unknown handler: %v", r)
	}
	if r := q("janus.eventhandler.sampleevh", `{"request":"tweak","events":"bogus"}`); r["response"].(map[string]any)["error_code"].(float64) != 413 {
		t.Errorf("bad tweak: %v", r)
	}
}

// TestBadEventHandlerConfigIsAClearError: a server with an invalid handler does not start, and says
// which handler and why.
func TestBadEventHandlerConfigIsAClearError(t *testing.T) {
	cfg := testConfig(t)
	cfg.Events.Handlers = []config.EventHandler{{Type: "http", URL: "ftp://backend/"}}
	if _, err := New(cfg, nil, nil); err == nil || !strings.Contains(err.Error(), "events.handlers[0].url") {
		t.Errorf("error %v", err)
	}
}
