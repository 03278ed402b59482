package events

import (
	"encoding/json"
	"testing"
	"time"
)

func newIdleHTTP(t testing.TB) *HTTPHandler {
	h, err := NewHTTP(Options{Name: HTTPPackage, URL: "http://127.0.0.1:1/", Mask: MaskAll, Grouping: true,
		MaxRetransmissions: 5, Backoff: 100 * time.Millisecond, Queue: 10, Timeout: time.Second}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(0) })
	return h
}

// TestHTTPQuery: Janus's tweak, strata's stats, and clear errors for bad requests, none of which
// changes anything.
func TestHTTPQuery(t *testing.T) {
	h := newIdleHTTP(t)
	for _, c := range []struct{ req, want string }{
		{``, `{"error":"Missing mandatory element (request)","error_code":412}`},
		{`null`, `{"error":"Missing mandatory element (request)","error_code":412}`},
		{`[1]`, `{"error":"Invalid element type (request should be an object)","error_code":413}`},
		{`{}`, `{"error":"Missing mandatory element (request)","error_code":412}`},
		{`{"request":5}`, `{"error":"Invalid element type (request should be a string)","error_code":413}`},
		{`{"request":"bogus"}`, `{"error":"Unknown request 'bogus'","error_code":411}`},
		{`{"request":"tweak","events":"sessions,nope"}`, `{"error":"Invalid element (events: unknown event type \"nope\" (want all, none, or a list of sessions, handles, external, jsep, webrtc, media, plugins, transports, core))","error_code":413}`},
		{`{"request":"tweak","events":3}`, `{"error":"Invalid element type (events should be a string)","error_code":413}`},
		{`{"request":"tweak","grouping":"yes"}`, `{"error":"Invalid element type (grouping should be a boolean)","error_code":413}`},
		{`{"request":"tweak","max_retransmissions":-1}`, `{"error":"Invalid element type (max_retransmissions should be an integer of at least 0)","error_code":413}`},
		{`{"request":"tweak","max_retransmissions":1.5}`, `{"error":"Invalid element type (max_retransmissions should be an integer of at least 0)","error_code":413}`},
		{`{"request":"tweak","retransmissions_backoff":0}`, `{"error":"Invalid element type (retransmissions_backoff should be an integer of at least 1)","error_code":413}`},
		{`{"request":"tweak","backend":"ftp://x/"}`, `{"error":"Invalid HTTP URI 'ftp://x/'","error_code":413}`},
		{`{"request":"tweak","events":"jsep","backend":"nope"}`, `{"error":"Invalid HTTP URI 'nope'","error_code":413}`},
	} {
		got, _ := json.Marshal(h.Query(json.RawMessage(c.req)))
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.req, got, c.want)
		}
	}
	if h.Mask() != MaskAll || !h.grouping.Load() || h.maxRetr.Load() != 5 || h.hs.target.Load().url != "http://127.0.0.1:1/" {
		t.Fatal("a refused request changed a setting")
	}
	got, _ := json.Marshal(h.Query(json.RawMessage(`{"request":"TWEAK","events":"sessions,handles","grouping":false,` +
		`"max_retransmissions":0,"retransmissions_backoff":250,"backend":"https://evh.example/in","backend_user":"u","backend_pwd":"p"}`)))
	if string(got) != `{"result":200}` {
		t.Fatalf("tweak: %s", got)
	}
	tg := h.hs.target.Load()
	if h.Mask() != Mask(TypeSession|TypeHandle) || h.grouping.Load() || h.maxRetr.Load() != 0 ||
		time.Duration(h.backoff.Load()) != 250*time.Millisecond || *tg != (httpTarget{"https://evh.example/in", "u", "p"}) {
		t.Errorf("after the tweak: mask %v grouping %v retr %d backoff %v target %+v", h.Mask(), h.grouping.Load(),
			h.maxRetr.Load(), time.Duration(h.backoff.Load()), *tg)
	}
	h.Offer([]byte(`{}`))
	got, _ = json.Marshal(h.Query(json.RawMessage(`{"request":"stats"}`)))
	var st struct {
		Result int
		Stats  Stats
	}
	if json.Unmarshal(got, &st) != nil || st.Result != 200 {
		t.Errorf("stats: %s", got)
	}
}

// FuzzQuery: whatever the request, the answer is a result or an error with a code, never a panic.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"request":"tweak","events":"all","grouping":true}`, `{"request":"stats"}`,
		`{"request":"tweak","max_retransmissions":1e300}`, `{"request":"tweak","backend":"http://[::1"}`, `[`, `"x"`} {
		f.Add([]byte(s))
	}
	h := newIdleHTTP(f)
	f.Fuzz(func(t *testing.T, req []byte) {
		ans, ok := h.Query(json.RawMessage(req)).(map[string]any)
		if !ok {
			t.Fatalf("answer %T", ans)
		}
		if _, res := ans["result"]; !res {
			if code, _ := ans["error_code"].(int); code < 411 || code > 413 {
				t.Fatalf("answer %v", ans)
			}
		}
	})
}
