package events

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// collector is a backend web server that fails while failing is set and records the events of the
// POSTs it accepts, in order.
type collector struct {
	t        *testing.T
	srv      *httptest.Server
	failing  atomic.Bool
	failures atomic.Int64
	mu       sync.Mutex
	events   []map[string]any
	posts    []string // each accepted body's first byte: '[' (grouped) or '{'
	auth     [2]string
}

func newCollector(t *testing.T) *collector {
	c := &collector{t: t}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.failing.Load() {
			c.failures.Add(1)
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		body, _ := io.ReadAll(r.Body)
		var evs []map[string]any
		if len(body) > 0 && body[0] == '[' {
			if err := json.Unmarshal(body, &evs); err != nil {
				t.Errorf("bad array %s", body)
			}
		} else {
			var ev map[string]any
			if err := json.Unmarshal(body, &ev); err != nil {
				t.Errorf("bad object %s", body)
			}
			evs = append(evs, ev)
		}
		user, pwd, _ := r.BasicAuth()
		c.mu.Lock()
		c.events = append(c.events, evs...)
		c.posts = append(c.posts, string(body[:1]))
		c.auth = [2]string{user, pwd}
		c.mu.Unlock()
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// seqs are the "n" members of the events' bodies, in arrival order.
func (c *collector) seqs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int, len(c.events))
	for i, ev := range c.events {
		out[i] = int(ev["event"].(map[string]any)["n"].(float64))
	}
	return out
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func httpOptions(url string) Options {
	return Options{Name: HTTPPackage, URL: url, Mask: MaskAll, Grouping: true, MaxRetransmissions: 1000,
		Backoff: 2 * time.Millisecond, Queue: 50, Timeout: 2 * time.Second}
}

// TestHTTPBackendFailsAndRecovers: while the backend fails, events wait in the queue; up to its bound
// none is lost, beyond it the new ones are dropped and counted; once the backend recovers, every
// queued event arrives, in order, grouped in arrays.
func TestHTTPBackendFailsAndRecovers(t *testing.T) {
	c := newCollector(t)
	c.failing.Store(true)
	h, err := NewHTTP(httpOptions(c.srv.URL), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(time.Second)
	b := NewBus("strata", []Handler{h}, quiet())
	emit := func(n int) { b.Emit(Event{Type: TypeSession, SessionID: 1, Body: map[string]int{"n": n}}) }

	emit(0) // taken by the worker at once: the batch it retries
	waitFor(t, "a failed attempt", 5*time.Second, func() bool { return c.failures.Load() >= 2 })
	const over = 7
	for n := 1; n <= 50+over; n++ { // the queue holds 50 while the worker retries event 0
		emit(n)
	}
	if st := h.Stats(); st.Dropped != over || st.Queued != 50 || st.Sent != 0 {
		t.Fatalf("while failing: %+v, want %d dropped and 50 queued", st, over)
	}
	c.failing.Store(false)
	waitFor(t, "the queued events", 10*time.Second, func() bool { return c.count() >= 51 })
	time.Sleep(50 * time.Millisecond)
	seqs := c.seqs()
	if len(seqs) != 51 {
		t.Fatalf("%d events delivered, want 51", len(seqs))
	}
	for i, n := range seqs {
		if n != i {
			t.Fatalf("event %d is n=%d: %v", i, n, seqs)
		}
	}
	st := h.Stats()
	if st.Sent != 51 || st.Dropped != over || st.Lost != 0 || st.Retries == 0 || st.Queued != 0 {
		t.Errorf("stats %+v", st)
	}
	c.mu.Lock()
	grouped := c.posts[0] == "[" && len(c.posts) < 51
	c.mu.Unlock()
	if !grouped {
		t.Errorf("not grouped: %v", c.posts)
	}
}

// TestHTTPGivesUpAfterMaxRetransmissions: an unreachable backend loses each batch after its retries,
// counted, and the handler goes on; without grouping each POST is one object, with basic auth.
func TestHTTPGivesUpAfterMaxRetransmissions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/events"
	ln.Close() // nothing listens there now
	o := httpOptions(dead)
	o.MaxRetransmissions, o.Grouping = 2, false
	o.User, o.Password = "evh", "secret"
	h, err := NewHTTP(o, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(time.Second)
	b := NewBus("strata", []Handler{h}, quiet())
	for n := range 3 {
		b.Emit(Event{Type: TypeHandle, SessionID: 1, HandleID: 2, Body: map[string]int{"n": n}})
	}
	waitFor(t, "lost events", 5*time.Second, func() bool { return h.Stats().Lost == 3 })
	if st := h.Stats(); st.Retries != 9 || st.Sent != 0 {
		t.Errorf("stats %+v: want 3 attempts for each of 3 events", st)
	}

	// The backend moves to a live server (query_eventhandler's tweak): delivery resumes.
	c := newCollector(t)
	if r := h.Query(json.RawMessage(`{"request":"tweak","backend":"` + c.srv.URL + `"}`)); r.(map[string]any)["result"] != 200 {
		t.Fatalf("tweak: %v", r)
	}
	b.Emit(Event{Type: TypeHandle, SessionID: 1, HandleID: 2, Body: map[string]int{"n": 3}})
	waitFor(t, "the event after the tweak", 5*time.Second, func() bool { return c.count() == 1 })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.posts[0] != "{" || c.auth != [2]string{"evh", "secret"} {
		t.Errorf("post %q with auth %v", c.posts[0], c.auth)
	}
}

// TestHTTPCloseDeliversWhatIsQueued: Close waits for the queue to drain while the backend takes it,
// and gives up at its timeout on one that does not.
func TestHTTPCloseDeliversWhatIsQueued(t *testing.T) {
	c := newCollector(t)
	h, err := NewHTTP(httpOptions(c.srv.URL), quiet())
	if err != nil {
		t.Fatal(err)
	}
	b := NewBus("strata", []Handler{h}, quiet())
	for n := range 20 {
		b.Emit(Event{Type: TypeCore, Body: map[string]int{"n": n}})
	}
	b.Close(5 * time.Second)
	if c.count() != 20 {
		t.Errorf("%d of 20 delivered before Close returned", c.count())
	}

	c.failing.Store(true)
	h2, err := NewHTTP(httpOptions(c.srv.URL), quiet())
	if err != nil {
		t.Fatal(err)
	}
	for n := range 5 {
		h2.Offer([]byte(`{"n":` + string(rune('0'+n)) + `}`))
	}
	start := time.Now()
	h2.Close(100 * time.Millisecond)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	if st := h2.Stats(); st.Lost != 5 || st.Sent != 0 {
		t.Errorf("after Close on a failing backend: %+v, want 5 lost", st)
	}
	if h2.Offer([]byte(`{}`)) {
		t.Error("Offer after Close accepted")
	}
}

func TestNewHTTPRefusesBadOptions(t *testing.T) {
	good := httpOptions("http://127.0.0.1:1/x")
	for name, mutate := range map[string]func(*Options){
		"scheme":  func(o *Options) { o.URL = "ws://127.0.0.1/" },
		"no host": func(o *Options) { o.URL = "http:///x" },
		"garbage": func(o *Options) { o.URL = "::" },
		"queue":   func(o *Options) { o.Queue = 0 },
		"retries": func(o *Options) { o.MaxRetransmissions = -1 },
		"backoff": func(o *Options) { o.Backoff = 0 },
		"timeout": func(o *Options) { o.Timeout = 0 },
		"name":    func(o *Options) { o.Name = "" },
	} {
		o := good
		mutate(&o)
		if h, err := NewHTTP(o, quiet()); err == nil {
			h.Close(0)
			t.Errorf("%s: accepted", name)
		}
	}
}
