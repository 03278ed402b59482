package textroom

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
)

// roomWithBackend is a plugin with room 1 posting to url, and a session in the room (no
// PeerConnection: its requests are answered directly).
func roomWithBackend(t *testing.T, url string, post config.TextRoomPost) (*Plugin, *session) {
	t.Helper()
	p := New(config.TextRoom{MaxMessageSize: 4096, Post: post, Rooms: []config.TextRoomRoom{{ID: "1", Post: url}}}, nil)
	t.Cleanup(p.Destroy)
	s := &session{p: p, rooms: map[string]*participant{}}
	if r := s.request([]byte(`{"textroom":"join","transaction":"j","room":1,"username":"u"}`)); r["textroom"] != "success" {
		t.Fatalf("join: %v", r)
	}
	return p, s
}

func say(t *testing.T, s *session, i int) {
	t.Helper()
	raw := fmt.Sprintf(`{"textroom":"message","transaction":"m%d","room":1,"text":"n%d"}`, i, i)
	if r := s.request([]byte(raw)); r["textroom"] != "success" {
		t.Fatalf("message %d: %v", i, r)
	}
}

// waitStats waits for the counters to reach want.
func waitStats(t *testing.T, p *Plugin, want PostStats) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.PostStats() != want {
		if time.Now().After(deadline) {
			t.Fatalf("post stats %+v, want %+v", p.PostStats(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPostNeverBlocks: a backend that does not answer holds neither the room nor its sender:
// with one worker stuck in a POST and two messages queued, the next seven are answered at once and
// dropped for the backend (counted); once the backend answers, the queued two are posted.
func TestPostNeverBlocks(t *testing.T) {
	arrived, release := make(chan struct{}, 16), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer srv.Close()
	p, s := roomWithBackend(t, srv.URL, config.TextRoomPost{Workers: 1, QueueSize: 2, Timeout: time.Minute})
	say(t, s, 0)
	<-arrived // the worker is stuck in the first POST
	for i := 1; i < 10; i++ {
		say(t, s, i) // would hang here if a POST were on the request's path
	}
	if st := p.PostStats(); st.Dropped != 7 {
		t.Fatalf("stats %+v, want 7 dropped", st)
	}
	close(release)
	waitStats(t, p, PostStats{Sent: 3, Dropped: 7})
}

// TestPostFailures: an error status, a backend that answers too late and one that is not there
// are each counted as failed, and the room keeps working.
func TestPostFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(time.Second)
		}
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	for i, url := range []string{srv.URL + "/err", srv.URL + "/slow", gone.URL} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p, s := roomWithBackend(t, url, config.TextRoomPost{Workers: 1, QueueSize: 4, Timeout: 200 * time.Millisecond})
			say(t, s, 1)
			waitStats(t, p, PostStats{Failed: 1})
			say(t, s, 2)
			waitStats(t, p, PostStats{Failed: 2})
		})
	}
}
