package janus

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		code   Code
		tx     string
		sessID uint64
	}{
		{"malformed", `{"janus":`, ErrInvalidJSON, "", 0},
		{"trailing garbage", `{"janus":"ping","transaction":"t"} x`, ErrInvalidJSON, "", 0},
		{"empty", ``, ErrInvalidJSON, "", 0},
		{"array", `[1,2]`, ErrInvalidJSONObject, "", 0},
		{"string", `"ping"`, ErrInvalidJSONObject, "", 0},
		{"number", ` 42 `, ErrInvalidJSONObject, "", 0},
		{"no transaction", `{"janus":"create"}`, ErrMissingMandatoryElement, "", 0},
		{"transaction not string", `{"janus":"create","transaction":5}`, ErrInvalidElementType, "", 0},
		{"transaction null", `{"janus":"create","transaction":null}`, ErrInvalidElementType, "", 0},
		{"no janus", `{"transaction":"t1","session_id":7}`, ErrMissingRequest, "t1", 7},
		{"janus not string", `{"janus":1,"transaction":"t1"}`, ErrInvalidElementType, "t1", 0},
		{"unknown verb", `{"janus":"bogus","transaction":"e1","session_id":88}`, ErrUnknownRequest, "e1", 88},
		{"session_id string", `{"janus":"keepalive","transaction":"t","session_id":"12"}`, ErrInvalidElementType, "", 0},
		{"session_id negative", `{"janus":"keepalive","transaction":"t","session_id":-3}`, ErrInvalidElementType, "", 0},
		{"handle_id float", `{"janus":"detach","transaction":"t","session_id":1,"handle_id":1.5}`, ErrInvalidElementType, "", 1},
		{"body array", `{"janus":"message","transaction":"t","body":[]}`, ErrInvalidElementType, "t", 0},
		{"body null", `{"janus":"message","transaction":"t","body":null}`, ErrInvalidElementType, "t", 0},
		{"jsep string", `{"janus":"message","transaction":"t","body":{},"jsep":"x"}`, ErrInvalidElementType, "t", 0},
		{"plugin number", `{"janus":"attach","transaction":"t","plugin":3}`, ErrInvalidElementType, "t", 0},
		{"candidate string", `{"janus":"trickle","transaction":"t","candidate":"c"}`, ErrInvalidElementType, "t", 0},
		{"candidates object", `{"janus":"trickle","transaction":"t","candidates":{}}`, ErrInvalidElementType, "t", 0},
		{"id string", `{"janus":"create","transaction":"t","id":"9"}`, ErrInvalidElementType, "t", 0},
		{"apisecret number", `{"janus":"create","transaction":"t","apisecret":9}`, ErrInvalidElementType, "t", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := Decode([]byte(c.in), APIVerbs)
			if err == nil {
				t.Fatalf("Decode(%s) succeeded: %+v", c.in, req)
			}
			if err.Code != c.code {
				t.Fatalf("Decode(%s) = %d %q, want %d", c.in, err.Code, err.Reason, c.code)
			}
			if err.Reason == "" {
				t.Fatal("empty reason")
			}
			if req.Transaction != c.tx || req.SessionID != c.sessID {
				t.Fatalf("partial request tx=%q session=%d, want %q %d", req.Transaction, req.SessionID, c.tx, c.sessID)
			}
		})
	}
}

func TestDecodeMessage(t *testing.T) {
	in := `{"janus":"MESSAGE","transaction":"0wxZ","session_id":7200733058299788,"handle_id":4828842172800079,
		"body":{"audio":true},"jsep":{"type":"offer","sdp":"v=0"},"apisecret":"s","token":"k"}`
	req, err := Decode([]byte(in), APIVerbs)
	if err != nil {
		t.Fatal(err)
	}
	if req.Janus != "message" || req.Verb != "MESSAGE" || req.Transaction != "0wxZ" {
		t.Fatalf("envelope: %+v", req)
	}
	if req.SessionID != 7200733058299788 || req.HandleID != 4828842172800079 {
		t.Fatalf("ids: %d %d", req.SessionID, req.HandleID)
	}
	if string(req.Body) != `{"audio":true}` || !strings.Contains(string(req.JSEP), `"offer"`) {
		t.Fatalf("body/jsep: %s %s", req.Body, req.JSEP)
	}
	if req.APISecret != "s" || req.Token != "k" {
		t.Fatalf("auth: %q %q", req.APISecret, req.Token)
	}
}

func TestDecodeTrickleAndAttach(t *testing.T) {
	req, err := Decode([]byte(`{"janus":"trickle","transaction":"t","candidates":[{"candidate":"a"},{"completed":true}]}`), APIVerbs)
	if err != nil || len(req.Candidates) != 2 {
		t.Fatalf("candidates: %v %d", err, len(req.Candidates))
	}
	req, err = Decode([]byte(`{"janus":"attach","transaction":"t","plugin":"janus.plugin.echotest","opaque_id":"o","loop_index":2}`), APIVerbs)
	if err != nil || req.Plugin != "janus.plugin.echotest" || req.OpaqueID != "o" {
		t.Fatalf("attach: %v %+v", err, req)
	}
	req, err = Decode([]byte(`{"janus":"create","transaction":"t","id":1234,"session_id":null}`), APIVerbs)
	if err != nil || req.ID != 1234 || req.SessionID != 0 {
		t.Fatalf("create: %v %+v", err, req)
	}
}

func TestDecodeVerbSets(t *testing.T) {
	if _, err := Decode([]byte(`{"janus":"list_sessions","transaction":"t"}`), APIVerbs); err == nil || err.Code != ErrUnknownRequest {
		t.Fatalf("admin verb on the Janus API: %v", err)
	}
	if _, err := Decode([]byte(`{"janus":"list_sessions","transaction":"t"}`), AdminVerbs); err != nil {
		t.Fatalf("admin verb on the admin API: %v", err)
	}
}

// TestDecodeUnknownVerbKeepsCredentials: the caller answers an unknown verb only after checking
// where it was sent and, below the root, its credentials, so those are read; a credential of the
// wrong type is just absent (Janus does not type-check members of a verb it does not know).
func TestDecodeUnknownVerbKeepsCredentials(t *testing.T) {
	req, err := Decode([]byte(`{"janus":"Bogus","transaction":"t","session_id":4,"handle_id":5,"apisecret":"s","token":"k","admin_secret":"a","body":"x"}`), APIVerbs)
	if err == nil || err.Code != ErrUnknownRequest || err.Reason != "Unknown request 'Bogus'" {
		t.Fatalf("error %v", err)
	}
	if req.Verb != "Bogus" || req.Janus != "bogus" || req.Transaction != "t" || req.SessionID != 4 || req.HandleID != 5 ||
		req.APISecret != "s" || req.Token != "k" || req.AdminSecret != "a" {
		t.Fatalf("partial request %+v", req)
	}
	req, err = Decode([]byte(`{"janus":"bogus","transaction":"t","apisecret":5}`), APIVerbs)
	if err == nil || err.Code != ErrUnknownRequest || req.APISecret != "" {
		t.Fatalf("a non-string secret: %v %+v", err, req)
	}
}

func TestCodeNames(t *testing.T) {
	for _, c := range Codes() {
		if strings.HasPrefix(c.String(), "UNKNOWN(") {
			t.Errorf("code %d has no name", c)
		}
	}
	if ErrTrickleInvalidStream.String() != "TRICKE_INVALID_STREAM" || Code(499).String() != "UNKNOWN(499)" {
		t.Fatal("names differ from Janus")
	}
}

func TestMessageMarshalOrder(t *testing.T) {
	m := Message{Janus: "event", SessionID: 7, Transaction: "tx", Sender: 9,
		PluginData: &PluginData{Plugin: "janus.plugin.echotest", Data: map[string]any{"result": "ok"}},
		JSEP:       map[string]string{"type": "answer", "sdp": "v=0"}}
	got := string(Encode(m))
	want := `{"janus":"event","session_id":7,"transaction":"tx","sender":9,"plugindata":{"plugin":"janus.plugin.echotest","data":{"result":"ok"}},"jsep":{"sdp":"v=0","type":"answer"}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	media := Message{Janus: "media", SessionID: 1, Sender: 2}.With("mid", "1").With("type", "video").With("receiving", false)
	if got := string(Encode(media)); got != `{"janus":"media","session_id":1,"sender":2,"mid":"1","receiving":false,"type":"video"}` {
		t.Fatalf("media: %s", got)
	}
	e := ErrorReply(123, "e3", Errorf(ErrSessionNotFound, "No such session %d", 123))
	if got := string(Encode(e)); got != `{"janus":"error","session_id":123,"transaction":"e3","error":{"code":458,"reason":"No such session 123"}}` {
		t.Fatalf("error: %s", got)
	}
}

func TestEncodeFallsBackOnUnencodableData(t *testing.T) {
	m := Message{Janus: "success", Transaction: "t", Data: make(chan int)}
	var back map[string]any
	if err := json.Unmarshal(Encode(m), &back); err != nil {
		t.Fatal(err)
	}
	if back["janus"] != "error" || back["transaction"] != "t" {
		t.Fatalf("fallback: %v", back)
	}
}
