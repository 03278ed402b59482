package audiobridge

import (
	"encoding/json"
	"regexp"
	"testing"
)

var elementInReason = regexp.MustCompile(`^(Missing mandatory element|Invalid element type) \(([a-z_]+)`)

// FuzzParseRequest: any body is either a request or an error with an audiobridge code; an error
// about an element names one that is absent (missing) or present (invalid) in the body or its rtp
// object; only JSON objects with a string request are accepted; the request's name decides sync or
// async as in Janus. Seeds: testdata/fuzz/FuzzParseRequest.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		`{"request":"create","room":9,"sampling_rate":48000,"allowed":["a"],"groups":["g"]}`,
		`{"request":"join","room":1234,"display":"x","rtp":{"ip":"10.0.0.1","port":5000,"payload_type":111}}`,
		`{"request":"configure","muted":false,"quality":4}`, `{"request":"list"}`, `null`, `[]`, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := Parse(body)
		if (req == nil) == (err == nil) {
			t.Fatalf("Parse(%q) = %v, %v: want exactly one", body, req, err)
		}
		if err != nil {
			if err.Code < ErrNoMessage || err.Code > ErrUnknown || err.Reason == "" {
				t.Fatalf("Parse(%q): error %v outside the audiobridge's codes", body, err)
			}
			if _, e := json.Marshal(err.Data(Short)); e != nil {
				t.Fatal(e)
			}
			checkNamedElement(t, body, err)
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			t.Fatalf("Parse accepted %q, which is not a JSON object", body)
		}
		name, _, derr := Decode(body)
		if derr != nil || name != req.Name() {
			t.Fatalf("Parse(%q) gave %q but Decode %q, %v", body, req.Name(), name, derr)
		}
	})
}

// checkNamedElement: "Missing mandatory element (x)" means x is absent, "Invalid element type (x
// ...)" that x is present, at the top level or (for join's rtp) inside the rtp object.
func checkNamedElement(t *testing.T, body []byte, err *Error) {
	match := elementInReason.FindStringSubmatch(err.Reason)
	if match == nil {
		return
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		t.Fatalf("%q: element error %v for a body that is not an object", body, err)
	}
	var rtp map[string]json.RawMessage
	_ = json.Unmarshal(top["rtp"], &rtp)
	_, inTop := top[match[2]]
	_, inRTP := rtp[match[2]]
	missing := match[1] == "Missing mandatory element"
	if missing && inTop || !missing && !inTop && !inRTP {
		t.Fatalf("%q: %v contradicts the body", body, err)
	}
	if missing && err.Code != ErrMissing || !missing && err.Code != ErrInvalid {
		t.Fatalf("%q: %v has the wrong code", body, err)
	}
}
