package gateway

import (
	"strconv"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
)

// pathCase is one request and the reply Janus 1.1.2 gave to it (recorded over HTTP and WebSocket
// from Debian's janus; both transports hand the same request to the same core function). {S} and
// {H} are a live session and handle; reply is the expected "janus" member, and for errors the code
// and the reason with ids written as {S} and {H}.
type pathCase struct {
	req    string
	reply  string
	code   janus.Code
	reason string
}

func (c pathCase) check(t *testing.T, m janus.Message, sid, hid uint64) {
	t.Helper()
	ids := strings.NewReplacer("{S}", strconv.FormatUint(sid, 10), "{H}", strconv.FormatUint(hid, 10))
	if c.code == 0 {
		if m.Janus != c.reply {
			t.Fatalf("%s: got %s, want %q", c.req, janus.Encode(m), c.reply)
		}
		return
	}
	if m.Janus != "error" || m.Error == nil || m.Error.Code != c.code || m.Error.Reason != ids.Replace(c.reason) {
		t.Fatalf("%s:\n got  %s\n want error %d %q", c.req, janus.Encode(m), c.code, ids.Replace(c.reason))
	}
	if strings.Contains(c.req, `"transaction":"t"`) && m.Transaction != "t" {
		t.Fatalf("%s: the error does not echo the transaction: %s", c.req, janus.Encode(m))
	}
}

// TestVerbsAtEachPathAsJanus: at the root only info, ping and create exist and anything else is 457;
// at a session or handle path a verb of the other level is 457 and a verb that is no verb there
// (unknown, or info, ping, create) is 453, after the session and handle were found; keepalive and
// claim work at a handle's path too.
func TestVerbsAtEachPathAsJanus(t *testing.T) {
	attach := `"plugin":"` + gatewaytest.EchoPackage + `"`
	cases := []pathCase{
		{`{"janus":"bogus","transaction":"t"}`, "", 457, "Unhandled request 'bogus' at this path"},
		{`{"janus":"Bogus","transaction":"t"}`, "", 457, "Unhandled request 'Bogus' at this path"},
		{`{"janus":"attach","transaction":"t",` + attach + `}`, "", 457, "Unhandled request 'attach' at this path"},
		{`{"janus":"bogus","transaction":"t","body":"x","apisecret":5}`, "", 457, "Unhandled request 'bogus' at this path"},
		{`{"janus":"bogus","transaction":"t","session_id":{S}}`, "", 453, "Unknown request 'bogus'"},
		{`{"janus":"bogus","transaction":"t","session_id":{S},"body":"x"}`, "", 453, "Unknown request 'bogus'"},
		{`{"janus":"bogus","transaction":"t","session_id":{S},"handle_id":{H}}`, "", 453, "Unknown request 'bogus'"},
		{`{"janus":"info","transaction":"t","session_id":{S}}`, "", 453, "Unknown request 'info'"},
		{`{"janus":"ping","transaction":"t","session_id":{S}}`, "", 453, "Unknown request 'ping'"},
		{`{"janus":"create","transaction":"t","session_id":{S}}`, "", 453, "Unknown request 'create'"},
		{`{"janus":"hangup","transaction":"t","session_id":{S}}`, "", 457, "Unhandled request 'hangup' at this path"},
		{`{"janus":"attach","transaction":"t","session_id":{S},"handle_id":{H},` + attach + `}`, "", 457, "Unhandled request 'attach' at this path"},
		{`{"janus":"destroy","transaction":"t","session_id":{S},"handle_id":{H}}`, "", 457, "Unhandled request 'destroy' at this path"},
		{`{"janus":"bogus","transaction":"t","session_id":999}`, "", 458, "No such session 999"},
		{`{"janus":"bogus","transaction":"t","session_id":{S},"handle_id":999}`, "", 459, "No such handle 999 in session {S}"},
		{`{"janus":"bogus","transaction":"t","handle_id":{H}}`, "", 458, "Session not found"},
		{`{"janus":"detach","transaction":"t","handle_id":{H}}`, "", 458, "Session not found"},
		{`{"janus":"keepalive","transaction":"t","session_id":{S},"handle_id":{H}}`, "ack", 0, ""},
		{`{"janus":"claim","transaction":"t","session_id":{S},"handle_id":{H}}`, "success", 0, ""},
	}
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	for _, c := range cases {
		c.check(t, e.do(c.req, sid, hid), sid, hid)
	}
	// Nothing above harmed the session or its handle.
	if m := e.do(`{"janus":"message","transaction":"m","session_id":{S},"handle_id":{H},"body":{"request":"sync"}}`, sid, hid); m.Janus != "success" {
		t.Fatalf("the handle stopped working: %s", janus.Encode(m))
	}
}

// TestUnknownVerbAuthenticatedFirst: below the root Janus checks the credentials before it looks
// at the verb, at the root it does not (the verb is refused before a secret would matter).
func TestUnknownVerbAuthenticatedFirst(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.APISecret = "s3cret" })
	sid := dataID(t, e.do(`{"janus":"create","transaction":"c","apisecret":"s3cret"}`, 0, 0))
	for _, c := range []pathCase{
		{`{"janus":"bogus","transaction":"t"}`, "", 457, "Unhandled request 'bogus' at this path"},
		{`{"janus":"bogus","transaction":"t","session_id":{S}}`, "", 403, "Unauthorized request (wrong or missing secret/token)"},
		{`{"janus":"bogus","transaction":"t","session_id":{S},"apisecret":7}`, "", 403, "Unauthorized request (wrong or missing secret/token)"},
		{`{"janus":"bogus","transaction":"t","session_id":{S},"apisecret":"s3cret"}`, "", 453, "Unknown request 'bogus'"},
		{`{"janus":"create","transaction":"t"}`, "", 403, "Unauthorized request (wrong or missing secret/token)"},
	} {
		c.check(t, e.do(c.req, sid, 0), sid, 0)
	}
}

// TestAdminVerbsAtEachPathAsJanus: the admin API has no 453. After the secret (and the session and
// handle below the root), a verb that does not exist at that level is 457; info and ping exist at
// the root only. Recorded from Janus 1.1.2's admin API.
func TestAdminVerbsAtEachPathAsJanus(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	for _, c := range []pathCase{
		{`{"janus":"bogus","transaction":"t"}`, "", 403, "Unauthorized request (wrong or missing secret/token)"},
		{`{"janus":"bogus","transaction":"t",{SECRET}}`, "", 457, "Unhandled request 'bogus' at this path"},
		{`{"janus":"attach","transaction":"t",{SECRET}}`, "", 457, "Unhandled request 'attach' at this path"},
		{`{"janus":"list_handles","transaction":"t",{SECRET}}`, "", 457, "Unhandled request 'list_handles' at this path"},
		{`{"janus":"bogus","transaction":"t","session_id":{S}}`, "", 403, "Unauthorized request (wrong or missing secret/token)"},
		{`{"janus":"bogus","transaction":"t","session_id":{S},{SECRET}}`, "", 457, "Unhandled request 'bogus' at this path"},
		{`{"janus":"info","transaction":"t","session_id":{S},{SECRET}}`, "", 457, "Unhandled request 'info' at this path"},
		{`{"janus":"ping","transaction":"t","session_id":{S},{SECRET}}`, "", 457, "Unhandled request 'ping' at this path"},
		{`{"janus":"handle_info","transaction":"t","session_id":{S},{SECRET}}`, "", 457, "Unhandled request 'handle_info' at this path"},
		{`{"janus":"bogus","transaction":"t","session_id":{S},"handle_id":{H},{SECRET}}`, "", 457, "Unhandled request 'bogus' at this path"},
		{`{"janus":"list_handles","transaction":"t","session_id":{S},"handle_id":{H},{SECRET}}`, "", 457, "Unhandled request 'list_handles' at this path"},
		{`{"janus":"bogus","transaction":"t","session_id":999,{SECRET}}`, "", 458, "No such session 999"},
		{`{"janus":"bogus","transaction":"t","session_id":{S},"handle_id":999,{SECRET}}`, "", 459, "No such handle 999 in session {S}"},
		{`{"janus":"handle_info","transaction":"t","handle_id":{H},{SECRET}}`, "", 458, "Session not found"},
		{`{"janus":"info","transaction":"t"}`, "server_info", 0, ""},
		{`{"janus":"ping","transaction":"t"}`, "pong", 0, ""},
	} {
		c.check(t, e.admin(c.req, sid, hid), sid, hid)
	}
}

// TestTrustedOriginSkipsCredentials: an in-process transport that authorised its client itself
// (WHIP's bearer token) is not asked for the API's secret; the same request from a client is.
func TestTrustedOriginSkipsCredentials(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.General.APISecret = "s3cret"
		c.General.TokenAuth = true
	})
	trusted := Origin{Sink: e.sink, Trusted: true}
	sid := dataID(t, e.doFrom(trusted, `{"janus":"create","transaction":"c"}`, 0, 0))
	if m := e.doFrom(trusted, `{"janus":"keepalive","transaction":"k","session_id":{S}}`, sid, 0); m.Janus != "ack" {
		t.Errorf("trusted keepalive: %s", janus.Encode(m))
	}
	if m := e.do(`{"janus":"keepalive","transaction":"k","session_id":{S}}`, sid, 0); m.Error == nil || m.Error.Code != janus.ErrUnauthorized {
		t.Errorf("untrusted keepalive without credentials: %s, want 403", janus.Encode(m))
	}
	if m := e.do(`{"janus":"create","transaction":"c"}`, 0, 0); m.Error == nil || m.Error.Code != janus.ErrUnauthorized {
		t.Errorf("untrusted create without credentials: %s, want 403", janus.Encode(m))
	}
}
