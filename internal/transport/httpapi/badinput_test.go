package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janus"
)

// TestBadInputKeepsServing sends each kind of bad request and checks its status and Janus code,
// then that a good request still works.
func TestBadInputKeepsServing(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.MaxMessageBytes = 512 })
	sid, hid := e.session()
	huge := `{"janus":"ping","transaction":"` + strings.Repeat("x", 600) + `"}`
	cases := []struct {
		name   string
		path   string
		body   string
		status int
		code   float64
	}{
		{"malformed JSON", "", `{"janus":`, 200, 454},
		{"not an object", "", `[1]`, 200, 455},
		{"missing transaction", "", `{"janus":"create"}`, 200, 456},
		{"oversized", "", huge, http.StatusRequestEntityTooLarge, 450},
		{"unknown session", "/123", `{"janus":"keepalive","transaction":"k"}`, 200, 458},
		{"unknown handle", fmt.Sprintf("/%d/99", sid), `{"janus":"message","transaction":"m","body":{}}`, 200, 459},
		{"conflicting body id", fmt.Sprintf("/%d", sid), `{"janus":"keepalive","transaction":"k","session_id":5}`, 200, 457},
		{"verb at wrong path", fmt.Sprintf("/%d/%d", sid, hid), `{"janus":"attach","transaction":"a","plugin":"x"}`, 200, 457},
		{"non-numeric session", "/abc", `{"janus":"keepalive","transaction":"k"}`, 200, 458},
		{"too deep", "/1/2/3", `{"janus":"keepalive","transaction":"k"}`, http.StatusNotFound, 457},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, m := e.post(c.path, c.body)
			if status != c.status || errCode(m) != c.code || m["janus"] != "error" {
				t.Fatalf("got %d %v, want %d with code %v", status, m, c.status, c.code)
			}
			if _, m := e.post(fmt.Sprintf("/%d", sid), `{"janus":"keepalive","transaction":"ok"}`); m["janus"] != "ack" {
				t.Fatalf("server stopped serving: %v", m)
			}
		})
	}
}

// TestUnknownVerbAtEachPath: what Janus 1.1.2's HTTP transport answers to a verb it does not have,
// posted to the root, a session and a handle (all with HTTP 200).
func TestUnknownVerbAtEachPath(t *testing.T) {
	e := newEnv(t, nil)
	sid, hid := e.session()
	for _, c := range []struct {
		path   string
		code   float64
		reason string
	}{
		{"", 457, "Unhandled request 'bogus' at this path"},
		{fmt.Sprintf("/%d", sid), 453, "Unknown request 'bogus'"},
		{fmt.Sprintf("/%d/%d", sid, hid), 453, "Unknown request 'bogus'"},
	} {
		status, m := e.post(c.path, `{"janus":"bogus","transaction":"b"}`)
		reason, _ := m["error"].(map[string]any)["reason"].(string)
		if status != http.StatusOK || errCode(m) != c.code || reason != c.reason || m["transaction"] != "b" {
			t.Fatalf("POST /janus%s: %d %v, want 200 with %v %q", c.path, status, m, c.code, c.reason)
		}
	}
	if _, m := e.post(fmt.Sprintf("/%d", sid), `{"janus":"keepalive","transaction":"ok"}`); m["janus"] != "ack" {
		t.Fatalf("server stopped serving: %v", m)
	}
}

func TestGetRoutes(t *testing.T) {
	e := newEnv(t, nil)
	sid, hid := e.session()
	if status, v := e.get("/info"); status != 200 || v.(map[string]any)["janus"] != "server_info" {
		t.Fatalf("GET /info: %d %v", status, v)
	} else if _, ok := v.(map[string]any)["transports"].(map[string]any)[TransportName]; !ok {
		t.Fatalf("info does not list the HTTP transport: %v", v)
	}
	resp, err := noRedirect.Get(fmt.Sprintf("%s/%d/%d?maxev=1", e.url, sid, hid))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := fmt.Sprintf("/janus/%d?maxev=1", sid); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Fatalf("GET handle: %d %q, want 302 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	if status, v := e.get("/424242"); status != http.StatusNotFound || errCode(v.(map[string]any)) != 458 {
		t.Fatalf("GET unknown session: %d %v", status, v)
	}
	req, _ := http.NewRequest(http.MethodDelete, e.url, nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
}

func TestLongPollAuth(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.APISecret = "s3cret" })
	_, m := e.post("", `{"janus":"create","transaction":"c","apisecret":"s3cret"}`)
	sid := id(t, m)
	if status, v := e.get(fmt.Sprintf("/%d", sid)); status != http.StatusForbidden || errCode(v.(map[string]any)) != 403 {
		t.Fatalf("long-poll without secret: %d %v", status, v)
	}
	if status, v := e.get(fmt.Sprintf("/%d?apisecret=s3cret", sid)); status != 200 || v.(map[string]any)["janus"] != "keepalive" {
		t.Fatalf("long-poll with secret: %d %v", status, v)
	}
}

func TestQueueDropsOldestAndSaysSo(t *testing.T) {
	q := newQueue(7, 2)
	dropped := 0
	for i := 0; i < 5; i++ {
		if q.push(janus.Message{Janus: "event", Transaction: fmt.Sprint(i)}) {
			dropped++
		}
	}
	msgs, closed, _ := q.take(10)
	if dropped != 3 || closed || len(msgs) != 3 || msgs[1].Transaction != "3" || msgs[2].Transaction != "4" {
		t.Fatalf("dropped %d, kept %+v", dropped, msgs)
	}
	if n := msgs[0]; n.Janus != EventsDropped || n.SessionID != 7 || n.Get("dropped") != uint64(3) {
		t.Fatalf("first message is not the drop notice: %+v", n)
	}
	q.push(janus.Message{Janus: "timeout"})
	q.close()
	if q.drained() {
		t.Fatal("closed queue with an event reports drained")
	}
	if msgs, closed, _ := q.take(1); len(msgs) != 1 || msgs[0].Janus != "timeout" || !closed || !q.drained() {
		t.Fatalf("last take: %+v %v", msgs, closed)
	}
}

// TestDropNoticeCountsAgainstMaxev: with maxev=1 the notice comes alone, the events after it.
func TestDropNoticeCountsAgainstMaxev(t *testing.T) {
	q := newQueue(7, 1)
	q.push(janus.Message{Janus: "event", Transaction: "a"})
	q.push(janus.Message{Janus: "event", Transaction: "b"})
	if msgs, _, _ := q.take(1); len(msgs) != 1 || msgs[0].Janus != EventsDropped {
		t.Fatalf("first poll: %+v", msgs)
	}
	if msgs, _, _ := q.take(1); len(msgs) != 1 || msgs[0].Transaction != "b" {
		t.Fatalf("second poll: %+v", msgs)
	}
	if msgs, _, _ := q.take(1); len(msgs) != 0 {
		t.Fatalf("third poll: %+v", msgs)
	}
}
