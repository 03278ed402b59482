package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
)

// TestEveryErrorCode sends, for each core error the gateway can produce, a request that must
// produce it. {S} and {H} are replaced by a live session and handle of the Echo plugin.
func TestEveryErrorCode(t *testing.T) {
	offerJSEP := `"jsep":{"type":"offer","sdp":"` + strings.ReplaceAll(gatewaytest.OfferSDP, "\r\n", `\r\n`) + `"}`
	answerJSEP := strings.Replace(offerJSEP, `"offer"`, `"answer"`, 1)
	cases := []struct {
		name   string
		mutate func(*config.Config)
		req    string
		code   janus.Code
	}{
		{"403 missing apisecret", func(c *config.Config) { c.General.APISecret = "s3cret" }, `{"janus":"create","transaction":"t"}`, 403},
		{"403 wrong apisecret", func(c *config.Config) { c.General.APISecret = "s3cret" }, `{"janus":"create","transaction":"t","apisecret":"nope"}`, 403},
		{"403 unknown token", func(c *config.Config) { c.General.TokenAuth = true; c.General.Tokens = []string{"tok"} }, `{"janus":"create","transaction":"t","token":"bad"}`, 403},
		{"452 no janus", nil, `{"transaction":"t"}`, 452},
		{"453 unknown verb", nil, `{"janus":"bogus","transaction":"t","session_id":{S}}`, 453},
		{"453 create with session", nil, `{"janus":"create","transaction":"t","session_id":{S}}`, 453},
		{"454 malformed", nil, `{"janus":"create",`, 454},
		{"455 not an object", nil, `["create"]`, 455},
		{"456 no transaction", nil, `{"janus":"create"}`, 456},
		{"456 no body", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H}}`, 456},
		{"456 no plugin", nil, `{"janus":"attach","transaction":"t","session_id":{S}}`, 456},
		{"456 jsep without sdp", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{},"jsep":{"type":"offer"}}`, 456},
		{"456 trickle without candidate", nil, `{"janus":"trickle","transaction":"t","session_id":{S},"handle_id":{H}}`, 456},
		{"457 attach at root", nil, `{"janus":"attach","transaction":"t","plugin":"` + gatewaytest.EchoPackage + `"}`, 457},
		{"457 unknown verb at root", nil, `{"janus":"bogus","transaction":"t"}`, 457},
		{"457 message without handle", nil, `{"janus":"message","transaction":"t","session_id":{S},"body":{}}`, 457},
		{"457 attach on handle", nil, `{"janus":"attach","transaction":"t","session_id":{S},"handle_id":{H},"plugin":"` + gatewaytest.EchoPackage + `"}`, 457},
		{"457 destroy at root", nil, `{"janus":"destroy","transaction":"t"}`, 457},
		{"458 unknown session", nil, `{"janus":"keepalive","transaction":"t","session_id":123}`, 458},
		{"458 handle without session", nil, `{"janus":"detach","transaction":"t","handle_id":{H}}`, 458},
		{"459 unknown handle", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":99,"body":{}}`, 459},
		{"460 unknown plugin", nil, `{"janus":"attach","transaction":"t","session_id":{S},"plugin":"janus.plugin.nope"}`, 460},
		{"461 attach fails", nil, `{"janus":"attach","transaction":"t","session_id":{S},"plugin":"` + gatewaytest.FailingPackage + `"}`, 461},
		{"462 plugin core error", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{"request":"core"}}`, 462},
		{"462 no content", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{"request":"nodata"}}`, 462},
		{"462 plugin panics", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{"request":"panic"}}`, 462},
		{"464 unknown jsep type", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{},"jsep":{"type":"pranswer","sdp":"v=0"}}`, 464},
		{"465 garbage sdp", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{},"jsep":{"type":"offer","sdp":"garbage"}}`, 465},
		{"465 unparsable sdp", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{},"jsep":{"type":"offer","sdp":"v=0\r\nm=bogus\r\n"}}`, 465},
		{"467 body not object", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":"x"}`, 467},
		{"467 sdp not string", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{},"jsep":{"type":"offer","sdp":5}}`, 467},
		{"467 session_id string", nil, `{"janus":"keepalive","transaction":"t","session_id":"{S}"}`, 467},
		{"468 session id taken", nil, `{"janus":"create","transaction":"t","id":{S}}`, 468},
		{"469 answer without offer", nil, `{"janus":"message","transaction":"t","session_id":{S},"handle_id":{H},"body":{},` + answerJSEP + `}`, 469},
		{"471 trickle without media", nil, `{"janus":"trickle","transaction":"t","session_id":{S},"handle_id":{H},"candidate":{"candidate":"candidate:1 1 udp 1 127.0.0.1 9 typ host","sdpMid":"0"}}`, 471},
		{"472 not accepting", func(c *config.Config) { c.General.AcceptNewSessions = false }, `{"janus":"create","transaction":"t"}`, 472},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			sid := e.create()
			hid := e.attach(sid)
			if c.mutate != nil { // configuration that would have blocked the setup above
				c.mutate(&e.g.cfg)
				e.g.acceptNew.Store(e.g.cfg.General.AcceptNewSessions)
			}
			m := e.do(c.req, sid, hid)
			wantCode(t, m, c.code)
			if m.Error.Reason == "" {
				t.Fatal("error without reason")
			}
			// The gateway keeps serving: the session still answers.
			if got := e.do(`{"janus":"ping","transaction":"p"}`, 0, 0); got.Janus != "pong" {
				t.Fatalf("after the error: %s", janus.Encode(got))
			}
		})
	}
}

func TestErrorEnvelopeEchoesRequest(t *testing.T) {
	e := newEnv(t, nil)
	m := e.do(`{"janus":"keepalive","session_id":123,"transaction":"e3"}`, 0, 0)
	if got := string(janus.Encode(m)); got != `{"janus":"error","session_id":123,"transaction":"e3","error":{"code":458,"reason":"No such session 123"}}` {
		t.Fatalf("got %s", got)
	}
	sid := e.create()
	m = e.do(`{"janus":"bogus","session_id":{S},"transaction":"e1"}`, sid, 0)
	if m.SessionID != sid || m.Transaction != "e1" || m.Error.Reason != "Unknown request 'bogus'" {
		t.Fatalf("got %s", janus.Encode(m))
	}
	m = e.do(`{"janus":"attach","session_id":{S},"plugin":"janus.plugin.nope","transaction":"e2"}`, sid, 0)
	if m.Error.Reason != "No such plugin 'janus.plugin.nope'" {
		t.Fatalf("got %s", janus.Encode(m))
	}
	hid := e.attach(sid)
	m = e.do(`{"janus":"message","session_id":{S},"handle_id":{H},"transaction":"e5","body":{"audio":true},"jsep":{"type":"offer","sdp":"garbage"}}`, sid, hid)
	if m.Error.Reason != "Invalid SDP (doesn't start with v=)" {
		t.Fatalf("got %s", janus.Encode(m))
	}
}

func TestAuthAccepted(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.General.APISecret = "s3cret"
		c.General.TokenAuth = true
		c.General.Tokens = []string{"tok"}
	})
	for _, req := range []string{
		`{"janus":"create","transaction":"t","apisecret":"s3cret"}`,
		`{"janus":"create","transaction":"t","token":"tok"}`,
	} {
		if m := e.do(req, 0, 0); m.Janus != "success" {
			t.Fatalf("%s: %s", req, janus.Encode(m))
		}
	}
	// info and ping need no secret, like in Janus.
	if m := e.do(`{"janus":"info","transaction":"t"}`, 0, 0); m.Janus != "server_info" {
		t.Fatalf("info: %s", janus.Encode(m))
	}
}

func TestPathIDsWinAndConflict(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	from := Origin{Sink: e.sink, PathSession: sid}
	if m := e.doFrom(from, `{"janus":"keepalive","transaction":"k"}`, 0, 0); m.Janus != "ack" || m.SessionID != sid {
		t.Fatalf("path session: %s", janus.Encode(m))
	}
	wantCode(t, e.doFrom(from, `{"janus":"keepalive","transaction":"k","session_id":5}`, 0, 0), 457)
	from.PathHandle = hid
	wantCode(t, e.doFrom(from, `{"janus":"hangup","transaction":"k","handle_id":5}`, 0, 0), 457)
	if m := e.doFrom(from, `{"janus":"hangup","transaction":"k","session_id":{S},"handle_id":{H}}`, sid, hid); m.Janus != "success" {
		t.Fatalf("matching body ids: %s", janus.Encode(m))
	}
}

func TestUnexpectedAnswerAfterPluginOffer(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	if m := e.do(`{"janus":"message","transaction":"o","session_id":{S},"handle_id":{H},"body":{"request":"offer"}}`, sid, hid); m.Janus != "ack" {
		t.Fatalf("offer request: %s", janus.Encode(m))
	}
	ev, ok := e.sink.WaitFor("event", 5*time.Second)
	if !ok || ev.Msg.JSEP == nil {
		t.Fatalf("no offer event: %+v", ev)
	}
	answer := `{"janus":"message","transaction":"a","session_id":{S},"handle_id":{H},"body":{},"jsep":{"type":"answer","sdp":"` +
		strings.ReplaceAll(gatewaytest.OfferSDP, "\r\n", `\r\n`) + `"}}`
	if m := e.do(answer, sid, hid); m.Janus != "ack" {
		t.Fatalf("answer to our offer refused: %s", janus.Encode(m))
	}
	wantCode(t, e.do(answer, sid, hid), 469) // only one answer per offer
}
