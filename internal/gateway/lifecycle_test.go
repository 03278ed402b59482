package gateway

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
)

func TestSessionLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	if !e.sink.Bound(sid) {
		t.Fatal("create did not bind the session to its sink")
	}
	hid := e.attach(sid)
	if m := e.do(`{"janus":"keepalive","transaction":"k","session_id":{S}}`, sid, 0); m.Janus != "ack" || m.SessionID != sid {
		t.Fatalf("keepalive: %s", janus.Encode(m))
	}

	// Asynchronous request: ack with hint, then an event with the same transaction and sender.
	m := e.do(`{"janus":"message","transaction":"m1","session_id":{S},"handle_id":{H},"body":{"audio":true}}`, sid, hid)
	if m.Janus != "ack" || m.Hint != "I'm taking my time!" || m.Transaction != "m1" {
		t.Fatalf("ack: %s", janus.Encode(m))
	}
	ev, ok := e.sink.WaitFor("event", 5*time.Second)
	if !ok {
		t.Fatal("no event")
	}
	got := roundTrip(t, ev.Msg)
	pd, _ := got["plugindata"].(map[string]any)
	if got["transaction"] != "m1" || uint64(got["sender"].(float64)) != hid || pd["plugin"] != gatewaytest.EchoPackage {
		t.Fatalf("event: %v", got)
	}

	// Synchronous request: success with plugindata and sender; plugin errors stay inside it.
	m = e.do(`{"janus":"message","transaction":"m2","session_id":{S},"handle_id":{H},"body":{"request":"sync"}}`, sid, hid)
	if m.Janus != "success" || m.Sender != hid || m.PluginData == nil {
		t.Fatalf("sync: %s", janus.Encode(m))
	}
	m = e.do(`{"janus":"message","transaction":"m3","session_id":{S},"handle_id":{H},"body":{"request":"error"}}`, sid, hid)
	if data := roundTrip(t, m)["plugindata"].(map[string]any)["data"].(map[string]any); m.Janus != "success" || data["error_code"] != 411.0 {
		t.Fatalf("plugin error: %s", janus.Encode(m))
	}

	// Detach: success, then a detached event; the plugin session is detached.
	m = e.do(`{"janus":"detach","transaction":"d","session_id":{S},"handle_id":{H}}`, sid, hid)
	if m.Janus != "success" {
		t.Fatalf("detach: %s", janus.Encode(m))
	}
	if ev, ok := e.sink.WaitFor("detached", 5*time.Second); !ok || ev.Msg.Sender != hid {
		t.Fatalf("no detached event: %+v", ev)
	}
	if !e.echo.Session(hid).Detached() {
		t.Fatal("plugin Detach not called")
	}
	wantCode(t, e.do(`{"janus":"message","transaction":"x","session_id":{S},"handle_id":{H},"body":{}}`, sid, hid), 459)

	// Destroy: success, the sink is released, the session is gone.
	if m := e.do(`{"janus":"destroy","transaction":"x","session_id":{S}}`, sid, 0); m.Janus != "success" {
		t.Fatalf("destroy: %s", janus.Encode(m))
	}
	if e.sink.Bound(sid) || e.g.HasSession(sid) {
		t.Fatal("destroyed session still bound or present")
	}
	wantCode(t, e.do(`{"janus":"keepalive","transaction":"k","session_id":{S}}`, sid, 0), 458)
}

func TestCreateWithClientID(t *testing.T) {
	e := newEnv(t, nil)
	m := e.do(`{"janus":"create","transaction":"c","id":4242}`, 0, 0)
	if dataID(t, m) != 4242 {
		t.Fatalf("client id not used: %s", janus.Encode(m))
	}
	wantCode(t, e.do(`{"janus":"create","transaction":"c","id":4242}`, 0, 0), janus.ErrSessionConflict)
}

func TestMessagesReachPluginInOrder(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	const n = 50
	var wg sync.WaitGroup
	wg.Add(n)
	// Submit without waiting, as the WebSocket transport does: order is fixed at Submit time.
	for i := 0; i < n; i++ {
		raw := fmt.Sprintf(`{"janus":"message","transaction":"t%02d","session_id":%d,"handle_id":%d,"body":{"request":"sync"}}`, i, sid, hid)
		e.g.Submit(context.Background(), []byte(raw), Origin{Sink: e.sink}, func(janus.Message) { wg.Done() })
	}
	wg.Wait()
	got := e.echo.Session(hid).Transactions()
	if len(got) != n {
		t.Fatalf("plugin saw %d messages, want %d", len(got), n)
	}
	for i, tx := range got {
		if want := fmt.Sprintf("t%02d", i); tx != want {
			t.Fatalf("message %d is %s, want %s (order %v)", i, tx, want, got)
		}
	}
}

func TestHangupWithoutPeerTellsPlugin(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	if m := e.do(`{"janus":"hangup","transaction":"h1","session_id":{S},"handle_id":{H}}`, sid, hid); m.Janus != "success" || m.SessionID != sid {
		t.Fatalf("hangup: %s", janus.Encode(m))
	}
	select {
	case ev := <-e.echo.Session(hid).Events():
		if ev != "closed:Janus API" {
			t.Fatalf("plugin got %q", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("plugin MediaClosed not called")
	}
	if _, ok := e.sink.WaitFor("event", 5*time.Second); !ok {
		t.Fatal("plugin's done event not delivered")
	}
}

func TestClaimMovesSession(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	other := gatewaytest.NewSink()
	m := e.doFrom(Origin{Sink: other}, `{"janus":"claim","transaction":"cl","session_id":{S}}`, sid, 0)
	if m.Janus != "success" || m.SessionID != sid {
		t.Fatalf("claim: %s", janus.Encode(m))
	}
	if e.sink.Bound(sid) || !other.Bound(sid) {
		t.Fatal("claim did not move the binding")
	}
	e.do(`{"janus":"message","transaction":"m","session_id":{S},"handle_id":{H},"body":{}}`, sid, hid)
	if _, ok := other.WaitFor("event", 5*time.Second); !ok {
		t.Fatal("event did not follow the claim")
	}
}

func TestSessionTimeout(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.SessionTimeout = time.Second },
		WithWatchdogInterval(50*time.Millisecond))
	sid := e.create()
	hid := e.attach(sid)
	ev, ok := e.sink.WaitFor("timeout", 5*time.Second)
	if !ok || ev.Msg.SessionID != sid {
		t.Fatalf("no timeout event: %+v", ev)
	}
	if got := string(janus.Encode(ev.Msg)); got != fmt.Sprintf(`{"janus":"timeout","session_id":%d}`, sid) {
		t.Fatalf("timeout envelope: %s", got)
	}
	// The event goes out first; the destruction follows.
	eventually(t, "timed-out session destroyed", func() bool {
		return !e.g.HasSession(sid) && !e.sink.Bound(sid) && e.echo.Session(hid).Detached()
	})
}

// TestActivityDefersTimeout drives the expiry check with explicit times: a session expires exactly
// session_timeout after its last activity, and each request or long-poll moves that point.
func TestActivityDefersTimeout(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.SessionTimeout = 10 * time.Second },
		WithWatchdogInterval(time.Hour)) // the test calls the check itself
	sid := e.create()
	s := e.g.session(sid)
	e.g.expireSessions(s.lastActivity().Add(9 * time.Second))
	if !e.g.HasSession(sid) {
		t.Fatal("expired before session_timeout")
	}
	before := s.lastActivity()
	time.Sleep(5 * time.Millisecond)
	if m := e.do(`{"janus":"keepalive","transaction":"k","session_id":{S}}`, sid, 0); m.Janus != "ack" {
		t.Fatalf("keepalive: %s", janus.Encode(m))
	}
	if !s.lastActivity().After(before) {
		t.Fatal("keepalive did not refresh the session")
	}
	e.g.expireSessions(before.Add(10*time.Second + time.Millisecond))
	if !e.g.HasSession(sid) {
		t.Fatal("expired although a keepalive came after the original deadline's start")
	}
	e.g.expireSessions(s.lastActivity().Add(10 * time.Second))
	if e.g.HasSession(sid) {
		t.Fatal("not expired session_timeout after the last activity")
	}
	if ev, ok := e.sink.WaitFor("timeout", time.Second); !ok || ev.Msg.SessionID != sid {
		t.Fatal("no timeout event")
	}
}

func TestSinkClosedDestroysSessions(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	e.g.SinkClosed(e.sink)
	if e.g.HasSession(sid) || !e.echo.Session(hid).Detached() {
		t.Fatal("session survived its sink")
	}
}

func TestReclaimAfterSinkClosed(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.ReclaimSessionTimeout = time.Second },
		WithWatchdogInterval(20*time.Millisecond))
	kept := e.create()
	lost := e.create()
	e.g.SinkClosed(e.sink)
	if !e.g.HasSession(kept) || !e.g.HasSession(lost) {
		t.Fatal("sessions destroyed despite reclaim_session_timeout")
	}
	other := gatewaytest.NewSink()
	if m := e.doFrom(Origin{Sink: other}, `{"janus":"claim","transaction":"cl","session_id":{S}}`, kept, 0); m.Janus != "success" {
		t.Fatalf("claim: %s", janus.Encode(m))
	}
	eventually(t, "unclaimed session destroyed after reclaim_session_timeout", func() bool { return !e.g.HasSession(lost) })
	if !e.g.HasSession(kept) || !other.Bound(kept) {
		t.Fatal("claimed session lost")
	}
}

func TestCloseDestroysEverything(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	e.g.Close()
	if e.g.SessionCount() != 0 || !e.echo.Session(hid).Detached() || !e.echo.Destroyed() {
		t.Fatal("Close left state behind")
	}
	wantCode(t, e.do(`{"janus":"keepalive","transaction":"k","session_id":{S}}`, sid, 0), janus.ErrSessionNotFound)
	wantCode(t, e.do(`{"janus":"create","transaction":"c"}`, 0, 0), janus.ErrNotAcceptingSessions)
}

func TestInfoReply(t *testing.T) {
	e := newEnv(t, nil)
	e.g.RegisterTransport("janus.transport.test", gatewaytest.NewEcho().Info())
	got := roundTrip(t, e.do(`{"janus":"info","transaction":"i1"}`, 0, 0))
	if got["janus"] != "server_info" || got["transaction"] != "i1" || got["name"] != "strata" {
		t.Fatalf("info: %v", got)
	}
	plugins, _ := got["plugins"].(map[string]any)
	if _, ok := plugins[gatewaytest.EchoPackage]; !ok {
		t.Fatalf("plugins: %v", plugins)
	}
	transports, _ := got["transports"].(map[string]any)
	if _, ok := transports["janus.transport.test"]; !ok {
		t.Fatalf("transports: %v", transports)
	}
	if got["session-timeout"] != 60.0 || got["accepting-new-sessions"] != true {
		t.Fatalf("settings: %v", got)
	}
}
