package netctl

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// fuzzTargets are the endpoints that decode a JSON body.
var fuzzTargets = []struct{ method, path string }{
	{"PUT", "/v1/streams/f"},
	{"PUT", "/v1/streams/cam/layers"},
	{"PUT", "/v1/subscriptions/f"},
	{"PUT", "/v1/links/pm"},
	{"POST", "/v1/reports"},
}

// FuzzAPI sends arbitrary bodies to every endpoint that decodes JSON: the answer is 2xx or a 4xx
// with a JSON error, never a 5xx or a panic, and the controller keeps answering afterwards.
func FuzzAPI(f *testing.F) {
	f.Add(uint8(0), []byte(streamBody))
	f.Add(uint8(0), []byte(`{"source":"paris","layers":[{"rate_bps":-1}]}`))
	f.Add(uint8(1), []byte(`{"layers":[{"rate_bps":600000},{"rate_bps":9223372036854775807}]}`))
	f.Add(uint8(2), []byte(`{"stream":"cam","receiver":"madrid"}`))
	f.Add(uint8(2), []byte(`{"stream":"cam","path":["ps","sm"]}`))
	f.Add(uint8(2), []byte(`{"stream":"cam","receiver":"madrid","path":["pm","pm-rev","pm"]}`))
	f.Add(uint8(3), []byte(`{"capacity_bps":1000000,"load_bps":5}`))
	f.Add(uint8(3), []byte(`{"reset":true}`))
	f.Add(uint8(4), []byte(`{"node":"paris","interval_ms":1000,"interfaces":[{"name":"eth0","tx_bps":1,"rx_bps":2}]}`))
	f.Add(uint8(4), []byte(`{"node":"paris","interfaces":null}`))
	f.Add(uint8(0), []byte(`{"source":"paris","layers":[{"rate_bps":1e400}]}`))
	f.Add(uint8(2), []byte("\xff\xfe{"))
	f.Add(uint8(0), []byte(`{"source":"paris","layers":[{"rate_bps":1,"dscp":34},{"rate_bps":1,"dscp":38}]}`))
	f.Add(uint8(1), []byte(`{"layers":[{"rate_bps":1,"dscp":64},{"rate_bps":1,"dscp":34}]}`))
	f.Add(uint8(2), []byte(`{"stream":"cam","receiver":"madrid","flow":{"proto":"udp","src":"10.0.0.1:5000","dst":"10.0.0.2:6000"}}`))
	f.Add(uint8(2), []byte(`{"stream":"cam","receiver":"madrid","flow":{"proto":"udp","src":"[fe80::1%lo]:1","dst":"[::ffff:1.2.3.4]:2"}}`))
	f.Fuzz(func(t *testing.T, target uint8, body []byte) {
		ctl := newTestController(t, nil)
		mustOK(t, ctl.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
		srv := NewServer(ctl, WithClock(func() time.Duration { return time.Second }))
		tg := fuzzTargets[int(target)%len(fuzzTargets)]
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(tg.method, tg.path, bytes.NewReader(body)))
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: HTTP %d %s", tg.method, tg.path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e api.Error
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("error answer is not an API error: %s", rec.Body)
			}
		}
		for _, path := range []string{"/v1/health", "/v1/decisions", "/v1/links", "/v1/subscriptions", "/v1/switches", "/"} {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("after %s %s %q: GET %s answered %d", tg.method, tg.path, body, path, rec.Code)
			}
		}
	})
}
