package netctl

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// fakeClock is a clock tests advance by hand.
type fakeClock struct{ now time.Duration }

func (f *fakeClock) get() time.Duration { return f.now }

func newTestServer(t *testing.T) (*httptest.Server, *Controller, *fakeClock) {
	t.Helper()
	ctl := newTestController(t, nil)
	clk := &fakeClock{}
	srv := NewServer(ctl, WithClock(clk.get), WithHeartbeat(50*time.Millisecond))
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return ts, ctl, clk
}

// call sends a request and returns the status and body.
func call(t *testing.T, ts *httptest.Server, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func want(t *testing.T, ts *httptest.Server, method, path, body string, status int, out any) {
	t.Helper()
	got, b := call(t, ts, method, path, body)
	if got != status {
		t.Fatalf("%s %s: HTTP %d (%s), want %d", method, path, got, b, status)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

const streamBody = `{"source":"paris","layers":[{"rate_bps":600000,"name":"base"},{"rate_bps":600000},{"rate_bps":1200000,"ssrc":13}]}`

func TestAPIHappyPath(t *testing.T) {
	ts, _, _ := newTestServer(t)
	var h api.Health
	want(t, ts, "GET", "/v1/health", "", 200, &h)
	if !h.OK || h.Topology != "test" || h.Mode != "joint" {
		t.Fatalf("health %+v", h)
	}
	var top api.Topology
	want(t, ts, "GET", "/v1/topology", "", 200, &top)
	if len(top.Nodes) != 6 || len(top.Links) != 9 || top.Links[2].DelayMs != 6 {
		t.Fatalf("topology %+v", top)
	}
	var st api.Stream
	want(t, ts, "PUT", "/v1/streams/cam", streamBody, http.StatusCreated, &st)
	if st.ID != "cam" || len(st.Layers) != 3 || st.Layers[2].SSRC != 13 {
		t.Fatalf("stream %+v", st)
	}
	want(t, ts, "PUT", "/v1/streams/cam", streamBody, http.StatusOK, nil)
	var res api.SubscriptionResult
	want(t, ts, "PUT", "/v1/subscriptions/s1", `{"stream":"cam","receiver":"madrid"}`, http.StatusCreated, &res)
	if res.Decision.Layers != 2 || !res.Subscription.Computed || strings.Join(res.Subscription.Path, ",") != "pm" {
		t.Fatalf("subscription answer %+v", res)
	}
	want(t, ts, "PUT", "/v1/subscriptions/s2", `{"id":"s2","stream":"cam","path":["ps","sm"]}`, http.StatusCreated, &res)
	if res.Decision.Layers != 3 || res.Subscription.Receiver != "milano" {
		t.Fatalf("explicit path answer %+v", res)
	}
	// Layer rates change: the temporal layer now costs 0.5 Mbit/s, and all three fit in 2 Mbit/s
	// (after the hold).
	want(t, ts, "PUT", "/v1/streams/cam/layers", `{"layers":[{"rate_bps":600000},{"rate_bps":600000},{"rate_bps":500000}]}`, 200, nil)
	var subs []api.Subscription
	want(t, ts, "GET", "/v1/subscriptions", "", 200, &subs)
	if len(subs) != 2 || subs[0].ID != "s1" {
		t.Fatalf("subscriptions %+v", subs)
	}
	var ds api.Decisions
	want(t, ts, "GET", "/v1/decisions", "", 200, &ds)
	if len(ds.Decisions) != 2 || ds.Decisions[0].Pending != 3 {
		t.Fatalf("decisions %+v: s1 should have an upgrade pending", ds)
	}
	var ls api.LinkState
	want(t, ts, "PUT", "/v1/links/pm", `{"capacity_bps":1000000}`, 200, &ls)
	if ls.CapacityBps != 1_000_000 || !ls.Override {
		t.Fatalf("link after the override %+v", ls)
	}
	want(t, ts, "GET", "/v1/decisions", "", 200, &ds)
	if ds.Decisions[0].Layers != 1 {
		t.Fatalf("1 Mbit/s: %+v, want 1 layer at once", ds.Decisions[0])
	}
	ls = api.LinkState{} // omitempty fields would keep their old values
	want(t, ts, "PUT", "/v1/links/pm", `{"reset":true,"load_bps":100000}`, 200, &ls)
	if ls.CapacityBps != 2_000_000 || ls.Override || ls.LoadBps != 100_000 {
		t.Fatalf("link after reset %+v", ls)
	}
	var links []api.LinkState
	want(t, ts, "GET", "/v1/links", "", 200, &links)
	if len(links) != 9 {
		t.Fatalf("%d links", len(links))
	}
	var rr api.ReportResult
	want(t, ts, "POST", "/v1/reports", `{"node":"paris","interval_ms":1000,"interfaces":[{"name":"eth9","tx_bps":5,"rx_bps":6}]}`, 200, &rr)
	if len(rr.Mapped) != 0 || len(rr.Unmapped) != 1 {
		t.Fatalf("report result %+v", rr)
	}
	var rules api.Rules
	want(t, ts, "GET", "/v1/rules?node=paris", "", 200, &rules)
	if len(rules.Rules) != 2 || rules.Rules[0].Subscription != "s1" || rules.Rules[0].Allow != 1 {
		t.Fatalf("paris rules %+v", rules)
	}
	code, page := call(t, ts, "GET", "/", "")
	if code != 200 || !strings.Contains(string(page), "http-equiv=\"refresh\"") || !strings.Contains(string(page), "s1") || !strings.Contains(string(page), "pm") {
		t.Fatalf("status page: HTTP %d\n%s", code, page)
	}
	want(t, ts, "DELETE", "/v1/subscriptions/s1", "", http.StatusNoContent, nil)
	want(t, ts, "DELETE", "/v1/streams/cam", "", http.StatusNoContent, nil)
	want(t, ts, "GET", "/v1/subscriptions", "", 200, &subs)
	if len(subs) != 0 {
		t.Fatalf("deleting the stream left %v", subs)
	}
}

func TestAPIBadInput(t *testing.T) {
	ts, _, _ := newTestServer(t)
	want(t, ts, "PUT", "/v1/streams/cam", streamBody, http.StatusCreated, nil)
	want(t, ts, "PUT", "/v1/streams/isle", `{"source":"island","layers":[{"rate_bps":1}]}`, http.StatusCreated, nil)
	huge := `{"source":"paris","layers":[{"rate_bps":1,"name":"` + strings.Repeat("x", api.MaxBodyBytes) + `"}]}`
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"malformed JSON", "PUT", "/v1/streams/x", `{"source":`, 400, api.CodeBadJSON},
		{"empty body", "PUT", "/v1/streams/x", ``, 400, api.CodeBadJSON},
		{"not an object", "PUT", "/v1/streams/x", `[1,2]`, 400, api.CodeBadJSON},
		{"unknown field", "PUT", "/v1/streams/x", `{"source":"paris","layers":[{"rate_bps":1}],"color":"red"}`, 400, api.CodeBadJSON},
		{"trailing data", "PUT", "/v1/streams/x", streamBody + `{}`, 400, api.CodeBadJSON},
		{"wrong type", "PUT", "/v1/streams/x", `{"source":"paris","layers":"all"}`, 400, api.CodeBadJSON},
		{"too large", "PUT", "/v1/streams/x", huge, 413, api.CodeTooLarge},
		{"unknown source node", "PUT", "/v1/streams/x", `{"source":"rome","layers":[{"rate_bps":1}]}`, 400, api.CodeUnknownNode},
		{"negative rate", "PUT", "/v1/streams/x", `{"source":"paris","layers":[{"rate_bps":-600000}]}`, 400, api.CodeBadRate},
		{"no layers", "PUT", "/v1/streams/x", `{"source":"paris","layers":[]}`, 400, api.CodeBadRequest},
		{"id mismatch", "PUT", "/v1/streams/x", `{"id":"y","source":"paris","layers":[{"rate_bps":1}]}`, 400, api.CodeIDMismatch},
		{"bad id", "PUT", "/v1/streams/a%20b", streamBody, 400, api.CodeBadID},
		{"negative layer rate update", "PUT", "/v1/streams/cam/layers", `{"layers":[{"rate_bps":-1}]}`, 400, api.CodeBadRate},
		{"layers of unknown stream", "PUT", "/v1/streams/nope/layers", `{"layers":[{"rate_bps":1}]}`, 404, api.CodeUnknownStream},
		{"get unknown stream", "GET", "/v1/streams/nope", "", 404, api.CodeUnknownStream},
		{"delete unknown stream", "DELETE", "/v1/streams/nope", "", 404, api.CodeUnknownStream},
		{"subscription to unknown stream", "PUT", "/v1/subscriptions/s", `{"stream":"nope","receiver":"madrid"}`, 400, api.CodeUnknownStream},
		{"unknown receiver", "PUT", "/v1/subscriptions/s", `{"stream":"cam","receiver":"rome"}`, 400, api.CodeUnknownNode},
		{"path that does not exist", "PUT", "/v1/subscriptions/s", `{"stream":"cam","path":["pm","sm"]}`, 400, api.CodeBadPath},
		{"path with unknown link", "PUT", "/v1/subscriptions/s", `{"stream":"cam","path":["zz"]}`, 400, api.CodeBadPath},
		{"no route", "PUT", "/v1/subscriptions/s", `{"stream":"isle","receiver":"madrid"}`, 400, api.CodeNoPath},
		{"neither receiver nor path", "PUT", "/v1/subscriptions/s", `{"stream":"cam"}`, 400, api.CodeBadRequest},
		{"flow not udp", "PUT", "/v1/subscriptions/s", `{"stream":"cam","receiver":"madrid","flow":{"proto":"tcp","src":"10.0.0.1:1","dst":"10.0.0.2:2"}}`, 400, api.CodeBadRequest},
		{"flow without port", "PUT", "/v1/subscriptions/s", `{"stream":"cam","receiver":"madrid","flow":{"proto":"udp","src":"10.0.0.1","dst":"10.0.0.2:2"}}`, 400, api.CodeBadRequest},
		{"flow mixing families", "PUT", "/v1/subscriptions/s", `{"stream":"cam","receiver":"madrid","flow":{"proto":"udp","src":"10.0.0.1:1","dst":"[fd00::2]:2"}}`, 400, api.CodeBadRequest},
		{"dscp out of range", "PUT", "/v1/streams/x", `{"source":"paris","layers":[{"rate_bps":1,"dscp":64}]}`, 400, api.CodeBadRequest},
		{"negative dscp", "PUT", "/v1/streams/x", `{"source":"paris","layers":[{"rate_bps":1,"dscp":-1}]}`, 400, api.CodeBadRequest},
		{"one dscp on two layers", "PUT", "/v1/streams/cam/layers", `{"layers":[{"rate_bps":1,"dscp":34},{"rate_bps":1,"dscp":34}]}`, 400, api.CodeBadRequest},
		{"switch of unknown node", "GET", "/v1/switches/rome", "", 404, api.CodeUnknownNode},
		{"no switch on node", "GET", "/v1/switches/paris", "", 404, api.CodeNotFound},
		{"get unknown subscription", "GET", "/v1/subscriptions/nope", "", 404, api.CodeUnknownSubscription},
		{"delete unknown subscription", "DELETE", "/v1/subscriptions/nope", "", 404, api.CodeUnknownSubscription},
		{"unknown link", "PUT", "/v1/links/nope", `{"capacity_bps":1}`, 404, api.CodeUnknownLink},
		{"get unknown link", "GET", "/v1/links/nope", "", 404, api.CodeUnknownLink},
		{"negative capacity", "PUT", "/v1/links/pm", `{"capacity_bps":-1}`, 400, api.CodeBadRate},
		{"zero capacity", "PUT", "/v1/links/pm", `{"capacity_bps":0}`, 400, api.CodeBadRate},
		{"negative load", "PUT", "/v1/links/pm", `{"load_bps":-5}`, 400, api.CodeBadRate},
		{"empty link update", "PUT", "/v1/links/pm", `{}`, 400, api.CodeBadRequest},
		{"report from unknown node", "POST", "/v1/reports", `{"node":"rome","interfaces":[]}`, 400, api.CodeUnknownNode},
		{"report with negative rate", "POST", "/v1/reports", `{"node":"paris","interfaces":[{"name":"eth0","tx_bps":-1}]}`, 400, api.CodeBadRate},
		{"report with negative interval", "POST", "/v1/reports", `{"node":"paris","interval_ms":-1}`, 400, api.CodeBadRequest},
		{"rules without node", "GET", "/v1/rules", "", 400, api.CodeBadRequest},
		{"rules of unknown node", "GET", "/v1/rules?node=rome", "", 404, api.CodeUnknownNode},
		{"wrong method", "POST", "/v1/streams/x", streamBody, 405, api.CodeMethodNotAllowed},
		{"unknown endpoint", "GET", "/v2/streams", "", 404, api.CodeNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := call(t, ts, c.method, c.path, c.body)
			var e api.Error
			if status != c.status || json.Unmarshal(body, &e) != nil || e.Error.Code != c.code || e.Error.Message == "" {
				t.Fatalf("HTTP %d %s, want %d with code %s", status, body, c.status, c.code)
			}
			// The controller keeps serving, with its state intact.
			var h api.Health
			want(t, ts, "GET", "/v1/health", "", 200, &h)
			var st api.Stream
			want(t, ts, "GET", "/v1/streams/cam", "", 200, &st)
			if len(st.Layers) != 3 {
				t.Fatalf("the bad request changed the stream: %+v", st)
			}
		})
	}
}

func TestSSEWireFormat(t *testing.T) {
	ts, ctl, _ := newTestServer(t)
	want(t, ts, "PUT", "/v1/streams/cam", streamBody, http.StatusCreated, nil)
	want(t, ts, "PUT", "/v1/subscriptions/s1", `{"stream":"cam","receiver":"madrid"}`, http.StatusCreated, nil)
	resp, err := ts.Client().Get(ts.URL + "/v1/decisions/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(5 * time.Second):
			t.Fatal("no line from the stream within 5 s")
		}
		return ""
	}
	// retry hint, then the snapshot.
	for l := next(); !strings.HasPrefix(l, "id: "); l = next() {
	}
	if l := next(); l != "event: snapshot" {
		t.Fatalf("got %q, want the snapshot event", l)
	}
	var snap api.Decisions
	if l := next(); json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &snap) != nil || len(snap.Decisions) != 1 {
		t.Fatalf("snapshot data %q", l)
	}
	want(t, ts, "PUT", "/v1/links/pm", `{"capacity_bps":1000000}`, 200, nil)
	seen := map[string]bool{}
	for !seen["event: decision"] {
		seen[next()] = true
	}
	var d api.Decision
	if l := next(); json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &d) != nil || d.Layers != 1 || d.Subscription != "s1" {
		t.Fatalf("decision data %q", l)
	}
	if !seen[": ping"] {
		// The heartbeat is 50 ms here; wait for one.
		for l := next(); l != ": ping"; l = next() {
		}
	}
	_ = ctl
}
