package sip

import (
	"encoding/json"
	"testing"
)

// TestRequestErrors: bad requests get Janus's codes and wording, before any SIP is sent.
func TestRequestErrors(t *testing.T) {
	cases := []struct {
		body string
		code int
	}{
		{``, ErrNoMessage},
		{`[1]`, ErrInvalidJSON},
		{`{}`, ErrMissingElement},
		{`{"request":5}`, ErrInvalidElement},
		{`{"request":"dance"}`, ErrInvalidRequest},
		{`{"request":"register"}`, ErrMissingElement},
		{`{"request":"register","username":7}`, ErrInvalidElement},
		{`{"request":"register","username":"alice"}`, ErrInvalidAddress},
		{`{"request":"register","username":"sip:alice@x"}`, ErrMissingElement},
		{`{"request":"register","username":"sip:alice@x","secret":"a","ha1_secret":"b"}`, ErrInvalidElement},
		{`{"request":"register","username":"sip:alice@x","secret":"a","proxy":"http://x"}`, ErrInvalidAddress},
		{`{"request":"register","type":"guest","send_register":true,"username":"sip:a@x"}`, ErrInvalidElement},
		{`{"request":"register","force_udp":true,"force_tcp":true,"username":"sip:a@x"}`, ErrInvalidElement},
		{`{"request":"register","type":"helper","username":"sip:a@x"}`, ErrMissingElement},
		{`{"request":"register","type":"helper","username":"sip:a@x","master_id":99}`, ErrHelper},
		{`{"request":"register","username":"sip:a@x","register_ttl":"long"}`, ErrInvalidElement},
		{`{"request":"unregister"}`, ErrWrongState},
		{`{"request":"call","uri":"sip:bob@x"}`, ErrWrongState},
		{`{"request":"call"}`, ErrWrongState},
		{`{"request":"accept"}`, ErrWrongState},
		{`{"request":"decline","code":"busy"}`, ErrInvalidElement},
		{`{"request":"decline"}`, ErrWrongState},
		{`{"request":"hangup"}`, ErrWrongState},
		{`{"request":"hold","direction":5}`, ErrInvalidElement},
		{`{"request":"dtmf_info"}`, ErrMissingElement},
		{`{"request":"dtmf_info","digit":"1","duration":-5}`, ErrInvalidElement},
		{`{"request":"info","type":"text/plain"}`, ErrMissingElement},
		{`{"request":"message"}`, ErrMissingElement},
		{`{"request":"message","content":"hi"}`, ErrWrongState},
		{`{"request":"transfer"}`, ErrMissingElement},
		{`{"request":"recording"}`, ErrMissingElement},
		{`{"request":"recording","action":"start","audio":true}`, ErrWrongState},
		{`{"request":"keyframe"}`, ErrWrongState},
	}
	_, s, h := attach(t)
	for _, c := range cases {
		send(s, "tx", json.RawMessage(c.body))
		e := h.next(t)
		if e.data["error_code"] != float64(c.code) || e.data["error"] == "" || e.data["sip"] != "event" {
			t.Errorf("%s: %v, want error %d", c.body, e.data, c.code)
		}
	}
}

// TestGuestAndCallState: a guest is registered at once without a REGISTER; a call without an
// offer is 448, with an unparsable URI 446; a second register is 445.
func TestGuestAndCallState(t *testing.T) {
	_, s, h := attach(t)
	send(s, "g", map[string]any{"request": "register", "type": "guest", "username": "sip:guest@strata.test"})
	if e := h.next(t); e.result() != "registered" || e.field("register_sent") != false {
		t.Fatalf("guest: %+v", e.data)
	}
	if q := s.Query().(map[string]any); q["registration_status"] != "disabled" || q["call_status"] != "idle" ||
		q["username"] != "sip:guest@strata.test" || q["sip_port"].(int) == 0 {
		t.Errorf("handle_info %v", q)
	}
	for body, code := range map[string]int{
		`{"request":"call","uri":"sip:bob@127.0.0.1"}`:                              ErrMissingSDP,
		`{"request":"call","uri":"bob"}`:                                            ErrInvalidAddress,
		`{"request":"call","uri":"sip:bob@x","srtp":"always"}`:                      ErrInvalidElement,
		`{"request":"register","username":"sip:a@x","secret":"s"}`:                  ErrAlreadyRegistered,
		`{"request":"call","uri":"sip:b@x","secret":"a","ha1_secret":"b"}`:          ErrInvalidElement,
		`{"request":"message","content":"hi","uri":"not a uri"}`:                    ErrInvalidAddress,
		`{"request":"register","type":"helper","username":"sip:a@x","master_id":1}`: ErrAlreadyRegistered,
	} {
		send(s, "c", json.RawMessage(body))
		if e := h.next(t); e.data["error_code"] != float64(code) {
			t.Errorf("%s: %v, want %d", body, e.data, code)
		}
	}
	send(s, "u", map[string]any{"request": "unregister"})
	if e := h.next(t); e.result() != "unregistering" {
		t.Fatalf("unregister: %+v", e.data)
	}
	if e := h.next(t); e.result() != "unregistered" || e.field("register_sent") != false {
		t.Fatalf("unregister: %+v", e.data)
	}
}

// TestHelperOfAMaster: a helper names its master's master_id and gets its identity.
func TestHelperOfAMaster(t *testing.T) {
	p, s, h := attach(t)
	send(s, "g", map[string]any{"request": "register", "type": "guest", "username": "sip:boss@strata.test"})
	e := h.next(t)
	id := e.field("master_id")
	h2 := &testHandle{events: make(chan event, 8)}
	ps2, _ := p.Attach(h2)
	send(ps2.(*session), "h", map[string]any{"request": "register", "type": "helper", "username": "sip:x@y", "master_id": id})
	e = h2.next(t)
	if e.result() != "registered" || e.field("helper") != true || e.field("username") != "sip:boss@strata.test" || e.field("master_id") != id {
		t.Fatalf("helper: %+v", e.data)
	}
}

// FuzzRequest: no request body makes the parser panic; what it accepts is a known request.
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `[]`, `{"request":"register","username":"sip:a@b","secret":"s","headers":{"X-A":"1"}}`,
		`{"request":"call","uri":"sip:b@c","srtp":"sdes_mandatory","headers":{"X\r\nEvil":"v","Y":"a\r\nb"}}`,
		`{"request":"register","contact_params":{"a":"b","c d":"e"}}`, `{"request":"dtmf_info","digit":"1","duration":100}`,
		`{"request":"REGISTER","username":"sip:a@b"}`, `{"request":"decline","code":603}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		name, _, err := decodeRequest(raw)
		if err == nil {
			if _, ok := tables[name]; !ok {
				t.Fatalf("accepted unknown request %q", name)
			}
		}
		for _, h := range customHeaders(raw) {
			if !token(h.name) || containsAny(h.value, "\r\n") {
				t.Fatalf("unsafe header %q: %q", h.name, h.value)
			}
		}
		for k, v := range stringMap(raw, "contact_params") {
			if !token(k) || (v != "" && !token(v)) {
				t.Fatalf("unsafe contact param %q=%q", k, v)
			}
		}
	})
}

func containsAny(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}
