package textroom_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
)

// posted is one POST a backend received.
type posted struct {
	contentType string
	body        map[string]any
}

// backend is an HTTP server that records the POSTs it gets.
func backend(t *testing.T) (*httptest.Server, chan posted) {
	t.Helper()
	got := make(chan posted, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if r.Method != http.MethodPost || json.Unmarshal(raw, &body) != nil {
			t.Errorf("backend got %s %q", r.Method, raw)
		}
		got <- posted{r.Header.Get("Content-Type"), body}
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func nextPost(t *testing.T, got chan posted) posted {
	t.Helper()
	select {
	case p := <-got:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("the backend got no POST")
		return posted{}
	}
}

// TestPost: a room with a `post` backend (from the configuration, and one created over the API)
// gets each public message and announcement as the JSON the participants receive; whispers are
// not posted.
func TestPost(t *testing.T) {
	srv, got := backend(t)
	c := start(t, func(tr *config.TextRoom) { tr.Rooms[0].Post = srv.URL + "/textroom" })
	alice, bob := setup(t, c), setup(t, c)
	alice.request("ja", map[string]any{"textroom": "join", "room": 1234, "username": "alice"})
	bob.request("jb", map[string]any{"textroom": "join", "room": 1234, "username": "bob"})

	alice.request("w", map[string]any{"textroom": "message", "room": 1234, "text": "psst", "to": "bob"})
	alice.request("m", map[string]any{"textroom": "message", "room": 1234, "text": "hello backend"})
	seen := bob.await("message")
	for seen["text"] != "hello backend" {
		seen = bob.await("message")
	}
	p := nextPost(t, got)
	if p.contentType != "application/json" || p.body["text"] != "hello backend" || p.body["from"] != "alice" ||
		p.body["room"] != float64(1234) || p.body["date"] != seen["date"] || p.body["whisper"] != nil {
		t.Fatalf("posted %+v, bob got %v", p, seen)
	}

	h := janustest.Attach(t, c, "janus.plugin.textroom")
	janustest.MustRequest(t, h, map[string]any{"request": "announcement", "room": 1234, "secret": roomSecret, "text": "news"}, nil)
	if p := nextPost(t, got); p.body["textroom"] != "announcement" || p.body["text"] != "news" {
		t.Fatalf("announcement posted as %+v", p)
	}

	// A room created with a backend over the API; a bad URL is refused.
	_, _, err := janustest.Request(t, h, map[string]any{"request": "create", "room": 9, "post": "ftp://x"}, nil)
	janustest.WantCode(t, err, 414)
	janustest.MustRequest(t, h, map[string]any{"request": "create", "room": 9, "post": srv.URL}, nil)
	bob.request("j9", map[string]any{"textroom": "join", "room": 9, "username": "bob"})
	bob.sendRaw(`{"textroom":"message","transaction":"m9","room":9,"text":"in nine","ack":false}`)
	if p := nextPost(t, got); p.body["room"] != float64(9) || p.body["text"] != "in nine" {
		t.Fatalf("room 9 posted %+v", p)
	}
	select {
	case p := <-got:
		t.Fatalf("unexpected POST %+v (a whisper?)", p)
	case <-time.After(200 * time.Millisecond):
	}
}
