package config

import (
	"strings"
	"testing"
	"time"
)

func TestEventsDefaultsAndHandlers(t *testing.T) {
	c := Default()
	e := c.Events
	if !e.Broadcast || !e.JSEPSDP || e.StatsPeriod != 5*time.Second || len(e.Handlers) != 0 {
		t.Fatalf("defaults %+v", e)
	}
	c, err := Parse([]byte(`
events:
  handler_defaults: {queue: 500}
  handlers:
    - {type: http, url: "http://127.0.0.1:8080/evh", events: "sessions,handles", backend_user: u, backend_pwd: p}
    - {type: websocket, url: "ws://127.0.0.1:9000/", grouping: false}
`), "evh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hs := c.Events.Handlers
	if len(hs) != 2 || hs[0].HandlerName() != "janus.eventhandler.sampleevh" || hs[1].HandlerName() != "janus.eventhandler.wsevh" {
		t.Fatalf("handlers %+v", hs)
	}
	o0 := hs[0].Over(c.Events.HandlerDefaults)
	o1 := hs[1].Over(c.Events.HandlerDefaults)
	if *o0.Events != "sessions,handles" || !*o0.Grouping || *o0.Queue != 500 || *o0.MaxRetransmissions != 5 ||
		*o0.RetransmissionsBackoff != 100*time.Millisecond || *o1.Events != "all" || *o1.Grouping || *o1.Subprotocol != "janus-event-handlers" {
		t.Errorf("resolved %+v / %+v", o0, o1)
	}
}

func TestBadEventHandlersAreRejected(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{`{type: smtp, url: "http://x/"}`, `events.handlers[0].type: "smtp" is not http or websocket`},
		{`{type: http, url: "ws://x/"}`, `events.handlers[0].url: "ws://x/" is not a http/https URL with a host`},
		{`{type: websocket, url: "x"}`, `events.handlers[0].url: "x" is not a ws/wss URL with a host`},
		{`{type: http, url: "http://x/", events: "sessions,bogus"}`, `events.handlers[0].events: unknown event type "bogus"`},
		{`{type: http, url: "http://x/", queue: 0}`, `events.handlers[0]: retransmissions_backoff, timeout and queue must be positive`},
		{`{type: http, url: "http://x/", max_retransmissions: -1}`, `events.handlers[0].max_retransmissions: must not be negative`},
		{`{type: http, url: "http://x/", backend_user: u}`, `events.handlers[0]: backend_user and backend_pwd go together`},
		{`{type: http, url: "http://x/", colour: red}`, `field colour not found`},
	} {
		_, err := Parse([]byte("events:\n  handlers:\n    - "+c.yaml+"\n"), "evh.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
	_, err := Parse([]byte("events:\n  handlers:\n    - {type: http, url: \"http://a/\"}\n    - {type: http, url: \"http://b/\"}\n"), "evh.yaml")
	if err == nil || !strings.Contains(err.Error(), `name "janus.eventhandler.sampleevh" is taken by events.handlers[0]`) {
		t.Errorf("two unnamed http handlers: %v", err)
	}
	_, err = Parse([]byte("events:\n  stats_period: -1s\n  handler_defaults: {events: nope}\n"), "evh.yaml")
	if err == nil || !strings.Contains(err.Error(), "events.stats_period") || !strings.Contains(err.Error(), "events.handler_defaults.events") {
		t.Errorf("bad defaults: %v", err)
	}
}
