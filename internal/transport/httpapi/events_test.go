package httpapi

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// TestLatePollerIsToldWhatWasDropped: a plugin pushes 2,000 events before anyone polls. With
// event_queue 1,000 the poller gets an events_dropped notice for the first 1,000, then the last
// 1,000 in order; with the bound raised it gets all 2,000 and no notice.
func TestLatePollerIsToldWhatWasDropped(t *testing.T) {
	for _, tc := range []struct{ bound, dropped int }{{1000, 1000}, {2000, 0}} {
		t.Run(fmt.Sprint("event_queue=", tc.bound), func(t *testing.T) {
			e := newEnv(t, func(c *config.Config) { c.Transports.HTTP.EventQueue = tc.bound })
			sid, hid := e.session()
			const pushed = 2000
			for i := range pushed {
				if err := e.echo.Session(hid).Push(map[string]any{"seq": i}); err != nil {
					t.Fatal(err)
				}
			}
			got := e.drain(sid)
			first := 0
			if tc.dropped > 0 {
				n := got[0]
				if n["janus"] != EventsDropped || n["dropped"] != float64(tc.dropped) || uint64(n["session_id"].(float64)) != sid {
					t.Fatalf("first message is not the notice of %d dropped events: %v", tc.dropped, n)
				}
				got = got[1:]
				first = tc.dropped
			}
			if len(got) != pushed-first {
				t.Fatalf("%d events after the notice, want %d", len(got), pushed-first)
			}
			for i, m := range got {
				data := m["plugindata"].(map[string]any)["data"].(map[string]any)
				if m["janus"] != "event" || data["seq"] != float64(first+i) {
					t.Fatalf("event %d: %v, want seq %d", i, m, first+i)
				}
			}
		})
	}
}

// drain long-polls with maxev=1000 until a poll times out, and returns every message in order.
func (e *env) drain(sid uint64) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for {
		status, v := e.get(fmt.Sprintf("/%d?maxev=1000", sid))
		if status != http.StatusOK {
			e.t.Fatalf("long-poll status %d: %v", status, v)
		}
		batch, ok := v.([]any)
		if !ok {
			if m := v.(map[string]any); m["janus"] != "keepalive" {
				e.t.Fatalf("single object from a maxev=1000 poll: %v", m)
			}
			return out
		}
		for _, m := range batch {
			out = append(out, m.(map[string]any))
		}
	}
}
