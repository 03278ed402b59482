package echotest

import (
	"encoding/json"
	"testing"
)

func TestParseRequestFields(t *testing.T) {
	r, err := parseRequest(json.RawMessage(`{"audio":false,"video":true,"bitrate":256000,"substream":1,"temporal":0,
		"spatial_layer":2,"temporal_layer":1,"videocodec":"vp9","videoprofile":"2","record":true,"filename":"x","min_delay":-1}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if *r.Audio || !*r.Video || *r.Bitrate != 256000 || *r.Substream != 1 || *r.Temporal != 0 || *r.Spatial != 2 ||
		*r.TemporalSVC != 1 || *r.VideoCodec != "vp9" || *r.VideoProfile != "2" || !*r.Record || *r.Filename != "x" || *r.MinDelay != -1 {
		t.Errorf("fields not read: %+v", r)
	}
	if r.SVC != nil || r.AudioCodec != nil {
		t.Error("absent fields set")
	}
	if _, err := parseRequest(json.RawMessage(`{}`), true); err != nil {
		t.Errorf("an offer alone needs no attribute: %v", err)
	}
	if _, err := parseRequest(json.RawMessage(`{"audiocodec":"opus"}`), false); err == nil || err.code != ErrInvalidElement {
		t.Errorf("audiocodec alone is not actionable in Janus: %v", err)
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"audio":true,"video":true}`, `{"bitrate":128000}`, `{"substream":2,"temporal":1}`, `null`, `[]`,
		`{"audio":"x"}`, `{"bitrate":1e3}`, `{"min_delay":-5}`, ``, `{"videocodec":"h264","videoprofile":"42e01f"}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, offer bool) {
		r, err := parseRequest(body, offer)
		if (r == nil) == (err == nil) {
			t.Fatalf("exactly one of request and error expected: %v %v", r, err)
		}
		if err != nil {
			if err.code < ErrNoMessage || err.code > ErrInvalidElement || err.reason == "" {
				t.Fatalf("error %+v", err)
			}
			return
		}
		for _, v := range []*int64{r.Substream, r.Temporal, r.Spatial, r.TemporalSVC, r.Bitrate, r.Fallback} {
			if v != nil && (*v < 0 || (v != r.Bitrate && v != r.Fallback && *v > 2)) {
				t.Fatalf("value out of range accepted: %d in %s", *v, body)
			}
		}
	})
}
