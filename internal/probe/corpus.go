// Package probe is strata's own abuse probes, run from a client's side against any server that
// speaks the Janus API (strata or Janus): a battery of malformed requests over HTTP and WebSocket,
// a WebSocket burst, session create/destroy cycles, oversized offers, candidate floods and slow
// clients. Each probe returns figures; the bounds they are judged against belong to the caller
// (the in-process tests and ./chaos).
package probe

import (
	"fmt"
	"strconv"
	"strings"
)

// Case is one malformed request. Body and Path may hold SESSION and HANDLE, replaced by the ids of
// a live session and handle so that bad input reaches the deep paths too. Path (HTTP only) is
// relative to the API's base path; WebSocket requests carry the ids in the body.
type Case struct {
	Name string
	Path string
	Body string
	// HTTPOnly cases test the URL, which a WebSocket does not have.
	HTTPOnly bool
}

// Expand substitutes the live ids.
func (c Case) Expand(sid, hid uint64) (path, body string) {
	r := strings.NewReplacer("SESSION", strconv.FormatUint(sid, 10), "HANDLE", strconv.FormatUint(hid, 10))
	return r.Replace(c.Path), r.Replace(c.Body)
}

// verbs are every Janus API verb a client may send, and a few it may not.
var verbs = []string{"create", "attach", "message", "trickle", "detach", "hangup", "keepalive", "destroy",
	"claim", "info", "ping", "list_sessions", "handle_info", "set_log_level", "", "CREATE", "bogus"}

// wrongValues are JSON values of every type and the edges of the numbers, for any field.
var wrongValues = []string{`null`, `true`, `0`, `-1`, `1.5`, `1e400`, `18446744073709551616`,
	`-9223372036854775809`, `9007199254740993`, `""`, `"SESSION"`, `"\u0000"`, `[]`, `[SESSION]`, `{}`,
	`{"a":{"b":{"c":[]}}}`, `"` + strings.Repeat("x", 4096) + `"`}

// malformed are bodies that are not a usable JSON object.
var malformed = []string{``, ` `, `{`, `}`, `[`, `{"janus":`, `{"janus":"create"`, `{"janus":"create",}`,
	`{janus:"create"}`, `{'janus':'create'}`, `null`, `true`, `1`, `"create"`, `[{"janus":"create"}]`,
	`{"janus":"create","transaction":"t"}garbage`, `{"janus":"create","transaction":"t"}{"janus":"create"}`,
	"\xef\xbb\xbf{\"janus\":\"ping\",\"transaction\":\"t\"}", "{\"janus\":\"ping\",\"transaction\":\"\xff\xfe\"}",
	"\x00\x01\x02\x03", strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"janus":"ping","transaction":"t","x":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `}`,
	`{"janus":"ping","janus":"create","transaction":"t"}`, `{"janus":"ping","transaction":"t","transaction":5}`}

// badSDPs are session descriptions no offer should be.
var badSDPs = []string{``, `v=0`, `garbage`, "v=0\r\no=- 0 0 IN IP4 0\r\ns=-\r\nt=0 0\r\n",
	"v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n", "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 99999999 RTP 96\r\n",
	"v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\na=mid:" +
		strings.Repeat("m", 5000) + "\r\n",
	"v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n" + strings.Repeat("a=x\r\n", 5000),
	"v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=ssrc-group:SIM 1 1 1\r\na=rid:" +
		"\r\na=simulcast:send ;;;\r\na=fmtp:96 ;;=;=\r\n", "\x00\xff"}

// badPaths are URLs under the API's base path that name no session or handle.
var badPaths = []string{"/abc", "/-1", "/0", "/18446744073709551616", "/99999999999999999999999", "/1.5", "/1/2/3",
	"/SESSION/abc", "/SESSION/-1", "/SESSION/HANDLE/x", "//", "/%00", "/SESSION/%2e%2e", "/info/x", "/ SESSION",
	"/SESSION?maxev=-1", "/0x10", "/1e3", "/SESSION/" + strings.Repeat("9", 400)}

// Cases is the battery: several hundred malformed requests of every kind, in a fixed order.
func Cases() []Case {
	var cs []Case
	add := func(name, path, body string) { cs = append(cs, Case{Name: name, Path: path, Body: body}) }
	for i, m := range malformed {
		add(fmt.Sprintf("malformed #%d", i), "", m)
		add(fmt.Sprintf("malformed at session #%d", i), "/SESSION", m)
	}
	fields := []string{"janus", "transaction", "session_id", "handle_id", "plugin", "body", "jsep", "candidate",
		"candidates", "apisecret", "token", "opaque_id", "id", "level"}
	for _, f := range fields {
		for i, v := range wrongValues {
			body := fmt.Sprintf(`{"janus":"message","transaction":"t","session_id":SESSION,"handle_id":HANDLE,"body":{"request":"ping"},%q:%s}`, f, v)
			add(fmt.Sprintf("%s=%s #%d", f, short(v), i), "/SESSION/HANDLE", body)
		}
	}
	for _, verb := range []string{"message", "trickle", "attach", "keepalive"} {
		for _, f := range []string{"janus", "transaction", "session_id", "handle_id", "body"} {
			for i, v := range wrongValues {
				add(fmt.Sprintf("%s with %s=%s #%d", verb, f, short(v), i), "/SESSION/HANDLE", replaceField(verb, f, v))
			}
		}
	}
	for _, v := range verbs {
		for _, where := range []string{"", "/SESSION", "/SESSION/HANDLE"} {
			add(fmt.Sprintf("verb %q with nothing at %q", v, where), where, fmt.Sprintf(`{"janus":%q,"transaction":"t"}`, v))
			add(fmt.Sprintf("verb %q wrong ids at %q", v, where), where,
				fmt.Sprintf(`{"janus":%q,"transaction":"t","session_id":1,"handle_id":2,"plugin":"janus.plugin.nope"}`, v))
		}
	}
	add("huge verb", "", `{"janus":"`+strings.Repeat("v", 60000)+`","transaction":"t"}`)
	add("huge transaction", "", `{"janus":"ping","transaction":"`+strings.Repeat("t", 60000)+`"}`)
	for i, sdp := range badSDPs {
		for _, typ := range []string{"offer", "answer", "pranswer", "", "rollback"} {
			jsep := fmt.Sprintf(`{"type":%q,"sdp":%q}`, typ, sdp)
			add(fmt.Sprintf("bad sdp #%d as %q", i, typ), "/SESSION/HANDLE",
				`{"janus":"message","transaction":"t","body":{"request":"configure","audio":true,"video":true},"jsep":`+jsep+`}`)
		}
	}
	for i, c := range []string{`{}`, `{"candidate":""}`, `{"candidate":5}`, `{"sdpMid":[],"sdpMLineIndex":"x"}`,
		`{"candidate":"candidate:1 1 udp 1 999.1.1.1 99999 typ host"}`, `{"candidate":"candidate:` + strings.Repeat("x", 5000) + `"}`,
		`{"completed":"yes"}`, `{"candidate":"candidate:1 1 udp 1 10.0.0.1 9 typ host","sdpMLineIndex":-5}`} {
		add(fmt.Sprintf("bad candidate #%d", i), "/SESSION/HANDLE", `{"janus":"trickle","transaction":"t","candidate":`+c+`}`)
		add(fmt.Sprintf("bad candidates #%d", i), "/SESSION/HANDLE", `{"janus":"trickle","transaction":"t","candidates":[`+c+`,1,null]}`)
	}
	for i, p := range badPaths {
		cs = append(cs, Case{Name: fmt.Sprintf("bad path #%d %s", i, p), Path: p, HTTPOnly: true,
			Body: `{"janus":"keepalive","transaction":"t"}`})
	}
	return cs
}

// replaceField builds a verb request whose field f has the value v instead of a good one.
func replaceField(verb, f, v string) string {
	good := map[string]string{"janus": strconv.Quote(verb), "transaction": `"t"`, "session_id": `SESSION`,
		"handle_id": `HANDLE`, "body": `{"request":"ping"}`}
	var parts []string
	for _, k := range []string{"janus", "transaction", "session_id", "handle_id", "body"} {
		val := good[k]
		if k == f {
			val = v
		}
		parts = append(parts, fmt.Sprintf("%q:%s", k, val))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func short(v string) string {
	if len(v) > 24 {
		return v[:24] + "…"
	}
	return v
}
