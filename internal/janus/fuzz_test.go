package janus

import (
	"encoding/json"
	"testing"
)

// FuzzDecode checks that Decode never panics and always ends in exactly one of two outcomes: a
// request with a known verb and a transaction, or a Janus error with a known core code and a reason.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`{"janus":"create","transaction":"VGyh"}`,
		`{"janus":"attach","plugin":"janus.plugin.echotest","opaque_id":"echotest-a9Je","transaction":"PERz","session_id":7200733058299788}`,
		`{"janus":"message","body":{"audio":true,"video":true},"jsep":{"type":"offer","sdp":"v=0\r\n"},"transaction":"0wxZ","session_id":1,"handle_id":2}`,
		`{"janus":"trickle","candidate":{"completed":true},"transaction":"c5k3","session_id":1,"handle_id":2}`,
		`{"janus":"trickle","candidates":[{"candidate":"candidate:1 1 udp 1 1.2.3.4 5 typ host","sdpMid":"0"}],"transaction":"x"}`,
		`{"janus":"bogus","session_id":8806391681002801,"transaction":"e1"}`,
		`{"janus":"create"}`, `[]`, `"x"`, `{`, ``, `null`, `{"janus":null,"transaction":null}`,
		`{"transaction":"t","session_id":-1}`, `{"transaction":"t","session_id":1e400}`,
		`{"janus":"keepalive","transaction":"t","session_id":18446744073709551616}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	known := map[Code]bool{}
	for _, c := range Codes() {
		known[c] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := Decode(data, APIVerbs)
		if err != nil {
			if !known[err.Code] || err.Reason == "" {
				t.Fatalf("bad error %+v for %q", err, data)
			}
			// The error reply built from the partial request must itself be valid JSON.
			if !json.Valid(Encode(ErrorReply(req.SessionID, req.Transaction, err))) {
				t.Fatalf("error reply is not JSON for %q", data)
			}
			return
		}
		if !APIVerbs[req.Janus] {
			t.Fatalf("accepted unknown verb %q", req.Janus)
		}
		if _, ok := req.Fields["transaction"]; !ok {
			t.Fatalf("accepted a request without transaction: %q", data)
		}
		for _, raw := range []json.RawMessage{req.Body, req.JSEP, req.Candidate} {
			if raw != nil && !IsObject(raw) {
				t.Fatalf("non-object member accepted: %q", data)
			}
		}
	})
}
