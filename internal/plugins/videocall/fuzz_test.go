package videocall

import (
	"testing"

	"github.com/strata-rtc/strata/internal/plugin"
)

// FuzzParseRequest feeds arbitrary bodies to the request parser and set's: they never panic, and
// every failure is one of Janus's videocall codes with a reason.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `[]`, `"x"`, `{}`, `{"request":5}`, `{"request":"list"}`,
		`{"request":"register","username":"alice"}`, `{"request":"call","username":7}`,
		`{"request":"set","audio":false,"video":true,"bitrate":128000,"substream":2,"temporal":0}`,
		`{"request":"set","bitrate":-1}`, `{"request":"set","substream":3}`, `{"request":"set","bitrate":1.5}`,
		`{"request":"set","spatial_layer":1,"temporal_layer":9}`, `{"request":"hangup","reason":"bye"}`,
		`{"request":"SET","record":true,"filename":"x"}`, `{"request":"set","bitrate":99999999999999999999}`,
	} {
		f.Add([]byte(seed))
	}
	known := map[int]bool{ErrNoMessage: true, ErrInvalidJSON: true, ErrMissingElement: true, ErrInvalidElement: true}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseRequest(body)
		check := func(err *plugin.RequestError) {
			if !known[err.Code] || err.Reason == "" {
				t.Fatalf("%q: error %d %q", body, err.Code, err.Reason)
			}
		}
		if err != nil {
			check(err)
			return
		}
		if r.name == "" && r.body.Str("request") != "" {
			t.Fatalf("%q: request name lost", body)
		}
		if _, err := r.username(); err != nil {
			check(err)
		}
		s, err := parseSet(r.body)
		if err != nil {
			check(err)
			return
		}
		for _, v := range []*int64{s.bitrate, s.substream, s.temporal, s.spatial, s.temporalSVC} {
			if v != nil && *v < 0 {
				t.Fatalf("%q: negative value accepted", body)
			}
		}
		for _, v := range []*int64{s.substream, s.temporal, s.spatial, s.temporalSVC} {
			if v != nil && *v > 2 {
				t.Fatalf("%q: layer %d accepted", body, *v)
			}
		}
	})
}
