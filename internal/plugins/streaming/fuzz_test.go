package streaming

import (
	"encoding/json"
	"regexp"
	"testing"
)

var elementInReason = regexp.MustCompile(`^(Missing mandatory element|Invalid element type) \(([a-z_0-9]+)`)

// FuzzParseRequest: any body is either a request or an error with a streaming code; an error about
// an element names one that is absent (missing) or present (invalid) in the body; only JSON objects
// with a string request are accepted; the deferred checks never panic and keep to the codes.
// Seeds: testdata/fuzz/FuzzParseRequest and the ones below.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		`{"request":"create","type":"rtp","id":1,"media":[{"type":"audio","mid":"a","port":5002,"pt":111,"codec":"opus"},{"type":"video","mid":"v","port":5004,"simulcast":true,"port2":5005}]}`,
		`{"request":"create","type":"rtp","audio":true,"audioport":5002,"audiopt":0,"data":true,"dataport":5008,"datatype":"text"}`,
		`{"request":"create","type":"live","filename":"/opt/music.alaw","audio":true}`,
		`{"request":"create","type":"rtsp","url":"rtsp://x/y","video":true,"rtsp_reconnect_delay":5}`,
		`{"request":"watch","id":1,"media":["a","v"],"pin":"p","substream":2}`,
		`{"request":"configure","mid":"v","substream":1,"min_delay":-1}`,
		`{"request":"recording","action":"start","id":1,"media":[{"mid":"a","filename":"f"}]}`,
		`{"request":"list"}`, `null`, `[]`, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := Parse(body)
		if (req == nil) == (err == nil) {
			t.Fatalf("Parse(%q) = %v, %v: want exactly one", body, req, err)
		}
		if err != nil {
			checkError(t, body, err)
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
		for _, e := range deferred(req) {
			if e != nil {
				checkCode(t, body, e)
			}
		}
	})
}

// deferred runs every check a parsed request has, with a secret and admin_key set.
func deferred(req Request) []*Error {
	switch r := req.(type) {
	case *Create:
		return []*Error{r.Check("k"), r.CheckSource()}
	case *List:
		_, err := r.Check("k")
		return []*Error{err}
	case *Toggle:
		return []*Error{r.Check("s")}
	case *Recording:
		return []*Error{r.Check("s", true), r.Check("", true)}
	case *Watch:
		return []*Error{r.PIN.Check("p"), r.CheckSimulcast(), r.CheckSVC()}
	case *Destroy:
		return []*Error{r.Secret.Check("s")}
	}
	return nil
}

func checkCode(t *testing.T, body []byte, err *Error) {
	if err.Code < errLowest || err.Code > errHighest || err.Reason == "" {
		t.Fatalf("%q: error %v outside the streaming codes", body, err)
	}
	if _, e := json.Marshal(err.Data(Short)); e != nil {
		t.Fatal(e)
	}
}

// checkError: "Missing mandatory element (x)" means x is absent, "Invalid element type (x ...)"
// that x is present in the body (Parse reports nothing about media items: CheckSource does).
func checkError(t *testing.T, body []byte, err *Error) {
	checkCode(t, body, err)
	match := elementInReason.FindStringSubmatch(err.Reason)
	if match == nil {
		return
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		t.Fatalf("%q: element error %v for a body that is not an object", body, err)
	}
	_, inTop := top[match[2]]
	missing := match[1] == "Missing mandatory element"
	if missing && inTop || !missing && !inTop {
		t.Fatalf("%q: %v contradicts the body", body, err)
	}
	if missing && err.Code != ErrMissing || !missing && err.Code != ErrInvalid {
		t.Fatalf("%q: %v has the wrong code", body, err)
	}
}
