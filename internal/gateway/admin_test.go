package gateway

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
)

// admin sends an admin request with the default secret; {S} and {H} are replaced by ids.
func (e *testEnv) admin(tmpl string, sid, hid uint64) janus.Message {
	e.t.Helper()
	raw := strings.NewReplacer("{S}", strconv.FormatUint(sid, 10), "{H}", strconv.FormatUint(hid, 10),
		"{SECRET}", `"admin_secret":"janusoverlord"`).Replace(tmpl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return e.g.Admin(ctx, []byte(raw), Origin{})
}

func TestAdminSecret(t *testing.T) {
	e := newEnv(t, nil)
	if m := e.admin(`{"janus":"ping","transaction":"p"}`, 0, 0); m.Janus != "pong" {
		t.Fatalf("ping: %s", janus.Encode(m))
	}
	if m := e.admin(`{"janus":"info","transaction":"i"}`, 0, 0); m.Janus != "server_info" {
		t.Fatalf("info: %s", janus.Encode(m))
	}
	wantCode(t, e.admin(`{"janus":"get_status","transaction":"s"}`, 0, 0), 403)
	wantCode(t, e.admin(`{"janus":"list_sessions","transaction":"s","admin_secret":"wrong"}`, 0, 0), 403)
	wantCode(t, e.admin(`{"janus":"create","transaction":"s",{SECRET}}`, 0, 0), 457)
	m := e.admin(`{"janus":"get_status","transaction":"s",{SECRET}}`, 0, 0)
	if st, ok := m.Get("status").(map[string]any); m.Janus != "success" || !ok || st["session_timeout"] != 60 {
		t.Fatalf("get_status: %s", janus.Encode(m))
	}
}

func TestAdminSessionsAndHandles(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	e.do(`{"janus":"message","transaction":"m","session_id":{S},"handle_id":{H},"body":{"request":"sync"}}`, sid, hid)

	m := e.admin(`{"janus":"list_sessions","transaction":"l",{SECRET}}`, 0, 0)
	if ids, _ := m.Get("sessions").([]uint64); len(ids) != 1 || ids[0] != sid {
		t.Fatalf("list_sessions: %s", janus.Encode(m))
	}
	m = e.admin(`{"janus":"list_handles","transaction":"l","session_id":{S},{SECRET}}`, sid, 0)
	if ids, _ := m.Get("handles").([]uint64); m.SessionID != sid || len(ids) != 1 || ids[0] != hid {
		t.Fatalf("list_handles: %s", janus.Encode(m))
	}
	wantCode(t, e.admin(`{"janus":"list_handles","transaction":"l",{SECRET}}`, 0, 0), 457)
	wantCode(t, e.admin(`{"janus":"handle_info","transaction":"l","session_id":{S},{SECRET}}`, sid, 0), 457)
	wantCode(t, e.admin(`{"janus":"handle_info","transaction":"l","session_id":{S},"handle_id":7,{SECRET}}`, sid, 0), 459)

	got := roundTrip(t, e.admin(`{"janus":"handle_info","transaction":"h","session_id":{S},"handle_id":{H},{SECRET}}`, sid, hid))
	info, _ := got["info"].(map[string]any)
	if got["janus"] != "success" || uint64(got["handle_id"].(float64)) != hid || info == nil {
		t.Fatalf("handle_info: %v", got)
	}
	if info["opaque_id"] != "op-1" || info["plugin"] != gatewaytest.EchoPackage || info["session_transport"] != "janus.transport.test" {
		t.Fatalf("handle_info identity: %v", info)
	}
	if ps, _ := info["plugin_specific"].(map[string]any); ps["messages"] != 1.0 {
		t.Fatalf("plugin_specific: %v", info["plugin_specific"])
	}
	if _, ok := info["flags"].(map[string]any)["got-offer"]; !ok {
		t.Fatalf("flags: %v", info["flags"])
	}
	if _, ok := info["webrtc"]; ok {
		t.Fatal("webrtc info without a PeerConnection")
	}
	if info["current_time"].(float64) < info["created"].(float64) {
		t.Fatalf("times: %v", info)
	}

	if m := e.admin(`{"janus":"hangup_webrtc","transaction":"h","session_id":{S},"handle_id":{H},{SECRET}}`, sid, hid); m.Janus != "success" {
		t.Fatalf("hangup_webrtc: %s", janus.Encode(m))
	}
	if ev := <-e.echo.Session(hid).Events(); ev != "closed:Admin API" {
		t.Fatalf("plugin got %q", ev)
	}
	if m := e.admin(`{"janus":"detach_handle","transaction":"d","session_id":{S},"handle_id":{H},{SECRET}}`, sid, hid); m.Janus != "success" {
		t.Fatalf("detach_handle: %s", janus.Encode(m))
	}
	if _, ok := e.sink.WaitFor("detached", 5*time.Second); !ok || !e.echo.Session(hid).Detached() {
		t.Fatal("detach_handle did not detach")
	}
	if m := e.admin(`{"janus":"destroy_session","transaction":"d","session_id":{S},{SECRET}}`, sid, 0); m.Janus != "success" {
		t.Fatalf("destroy_session: %s", janus.Encode(m))
	}
	if e.g.HasSession(sid) {
		t.Fatal("destroy_session left the session")
	}
}

func TestAdminSettings(t *testing.T) {
	e := newEnv(t, nil)
	m := e.admin(`{"janus":"set_session_timeout","transaction":"s","timeout":5,{SECRET}}`, 0, 0)
	if m.Janus != "success" || m.Get("timeout") != int64(5) || e.g.SessionTimeout() != 5*time.Second {
		t.Fatalf("set_session_timeout: %s", janus.Encode(m))
	}
	wantCode(t, e.admin(`{"janus":"set_session_timeout","transaction":"s","timeout":"x",{SECRET}}`, 0, 0), 467)
	wantCode(t, e.admin(`{"janus":"set_session_timeout","transaction":"s",{SECRET}}`, 0, 0), 456)

	if m := e.admin(`{"janus":"set_log_level","transaction":"s","level":7,{SECRET}}`, 0, 0); m.Janus != "success" || e.g.LogLevel().Level() >= slog.LevelDebug {
		t.Fatalf("set_log_level 7: %s level %v", janus.Encode(m), e.g.LogLevel().Level())
	}
	if e.admin(`{"janus":"set_log_level","transaction":"s","level":3,{SECRET}}`, 0, 0); e.g.LogLevel().Level() != slog.LevelWarn {
		t.Fatalf("set_log_level 3: level %v", e.g.LogLevel().Level())
	}
	wantCode(t, e.admin(`{"janus":"set_log_level","transaction":"s","level":9,{SECRET}}`, 0, 0), 467)

	if m := e.admin(`{"janus":"accept_new_sessions","transaction":"s","accept":false,{SECRET}}`, 0, 0); m.Get("accept") != false {
		t.Fatalf("accept_new_sessions: %s", janus.Encode(m))
	}
	wantCode(t, e.do(`{"janus":"create","transaction":"c"}`, 0, 0), 472)
	e.admin(`{"janus":"accept_new_sessions","transaction":"s","accept":true,{SECRET}}`, 0, 0)
	e.create()
	wantCode(t, e.admin(`{"janus":"accept_new_sessions","transaction":"s","accept":1,{SECRET}}`, 0, 0), 467)
}

func TestAdminMessagePlugin(t *testing.T) {
	e := newEnv(t, nil)
	m := e.admin(`{"janus":"message_plugin","transaction":"m","plugin":"`+gatewaytest.EchoPackage+`","request":{"request":"list"},{SECRET}}`, 0, 0)
	resp, _ := roundTrip(t, m)["response"].(map[string]any)
	if m.Janus != "success" || resp["testecho"] != "admin" || resp["request"].(map[string]any)["request"] != "list" {
		t.Fatalf("message_plugin: %s", janus.Encode(m))
	}
	wantCode(t, e.admin(`{"janus":"message_plugin","transaction":"m","plugin":"janus.plugin.nope","request":{},{SECRET}}`, 0, 0), 460)
	wantCode(t, e.admin(`{"janus":"message_plugin","transaction":"m","plugin":"`+gatewaytest.FailingPackage+`","request":{},{SECRET}}`, 0, 0), 462)
	wantCode(t, e.admin(`{"janus":"message_plugin","transaction":"m","plugin":"`+gatewaytest.EchoPackage+`","request":[],{SECRET}}`, 0, 0), 467)
	wantCode(t, e.admin(`{"janus":"message_plugin","transaction":"m","request":{},{SECRET}}`, 0, 0), 456)
}
