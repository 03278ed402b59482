package streaming

import (
	"encoding/json"
	"testing"
)

func mustParse[T Request](t *testing.T, body string) T {
	t.Helper()
	req, err := Parse(json.RawMessage(body))
	if err != nil {
		t.Fatalf("Parse(%s): %v", body, err)
	}
	return req.(T)
}

// TestSecretChecks: secret, pin and admin_key are checked as Janus's JANUS_CHECK_SECRET does, once
// the value to compare with is known: nothing to compare with passes anything, even a number.
func TestSecretChecks(t *testing.T) {
	cases := []struct {
		body, want string
		fail       failure
	}{
		{`{"request":"destroy","id":1,"secret":7}`, "", failure{}},
		{`{"request":"destroy","id":1,"secret":7}`, "s", failure{454, "Invalid element type (secret should be a string)"}},
		{`{"request":"destroy","id":1}`, "s", failure{453, "Missing mandatory element (secret)"}},
		{`{"request":"destroy","id":1,"secret":"x"}`, "s", failure{457, "Unauthorized (wrong secret)"}},
		{`{"request":"destroy","id":1,"secret":"s"}`, "s", failure{}},
	}
	for _, c := range cases {
		err := mustParse[*Destroy](t, c.body).Secret.Check(c.want)
		if c.fail.code == 0 && err != nil || c.fail.code != 0 && !c.fail.is(err) {
			t.Errorf("%s with secret %q: %v, want %v", c.body, c.want, err, c.fail)
		}
	}
	w := mustParse[*Watch](t, `{"request":"watch","id":1,"pin":"1234"}`)
	if !(failure{457, "Unauthorized (wrong pin)"}).is(w.PIN.Check("9999")) || w.PIN.Check("1234") != nil {
		t.Error("watch's pin is not checked")
	}
	c := mustParse[*Create](t, `{"request":"create","type":"rtp","audio":true}`)
	if !(failure{453, "Missing mandatory element (admin_key)"}).is(c.Check("adm")) || c.Check("") != nil {
		t.Error("create's admin_key is not checked")
	}
	l := mustParse[*List](t, `{"request":"list","admin_key":"bad"}`)
	if _, err := l.Check("adm"); !(failure{457, "Unauthorized (wrong admin_key)"}).is(err) {
		t.Errorf("list with a wrong admin_key: %v", err)
	}
	if private, err := mustParse[*List](t, `{"request":"list","admin_key":""}`).Check("adm"); private || err != nil {
		t.Errorf("list with an empty admin_key: %v %v, want public only", private, err)
	}
	if private, err := mustParse[*List](t, `{"request":"list","admin_key":"adm"}`).Check("adm"); !private || err != nil {
		t.Errorf("list with the admin_key: %v %v", private, err)
	}
	info := mustParse[*Info](t, `{"request":"info","id":1,"secret":"x"}`)
	if info.Admin("s") || !info.Admin("") || !mustParse[*Info](t, `{"request":"info","id":1,"secret":"s"}`).Admin("s") {
		t.Error("info's details are not gated by the secret")
	}
}

// TestChecksAfterMountpoint: what Janus checks after finding the mountpoint comes in Janus's order
// (recording: RTP only, secret, table; disable: secret, table; watch: layers per stream kind).
func TestChecksAfterMountpoint(t *testing.T) {
	r := mustParse[*Recording](t, `{"request":"recording","action":"start","id":1,"audio":true}`)
	if !(failure{452, "Recording is only available on RTP-based live streams"}).is(r.Check("s", false)) {
		t.Errorf("recording a file mountpoint: %v", r.Check("s", false))
	}
	if !(failure{453, "Missing mandatory element (secret)"}).is(r.Check("s", true)) {
		t.Errorf("recording without the secret: %v", r.Check("s", true))
	}
	if !(failure{454, "Invalid element type (audio should be a string)"}).is(r.Check("", true)) {
		t.Errorf("recording start with a boolean audio: %v", r.Check("", true))
	}
	stop := mustParse[*Recording](t, `{"request":"recording","action":"stop","id":1,"audio":"x"}`)
	if !(failure{454, "Invalid element type (audio should be a boolean)"}).is(stop.Check("", true)) {
		t.Errorf("recording stop with a string audio: %v", stop.Check("", true))
	}
	d := mustParse[*Toggle](t, `{"request":"disable","id":1,"stop_recording":"yes","secret":"x"}`)
	if !(failure{457, "Unauthorized (wrong secret)"}).is(d.Check("s")) {
		t.Errorf("disable with a wrong secret: %v", d.Check("s"))
	}
	if !(failure{454, "Invalid element type (stop_recording should be a boolean)"}).is(d.Check("")) {
		t.Errorf("disable with a bad stop_recording: %v", d.Check(""))
	}
	if e := mustParse[*Toggle](t, `{"request":"enable","id":1,"stop_recording":"yes"}`); e.Check("") != nil {
		t.Errorf("enable does not read stop_recording: %v", e.Check(""))
	}
	w := mustParse[*Watch](t, `{"request":"watch","id":1,"substream":"high","spatial_layer":2}`)
	if !(failure{454, "Invalid element type (substream should be a positive integer)"}).is(w.CheckSimulcast()) || w.CheckSVC() != nil {
		t.Errorf("watch layers: %v, %v", w.CheckSimulcast(), w.CheckSVC())
	}
	e := mustParse[*Edit](t, `{"request":"edit","id":42}`)
	if !(failure{455, "No such mountpoint (42)"}).is(e.NoSuchMountpoint()) || !(failure{455, "No such mountpoint/stream 42"}).is(NoSuchMountpoint(42)) {
		t.Error("the two wordings of 455")
	}
	if !(failure{455, "Can't start: no mountpoint set"}).is(NotWatching("pause")) || !(failure{455, "Can't configure: not on a mountpoint"}).is(NotWatching("configure")) {
		t.Error("NotWatching's wordings")
	}
}
