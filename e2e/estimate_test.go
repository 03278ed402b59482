package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/server"
)

// adminCall posts one admin API request and decodes the reply.
func adminCall(t *testing.T, srv *server.Server, body string, into any) {
	t.Helper()
	body = strings.Replace(body, "{", fmt.Sprintf(`{"transaction":"e2e","admin_secret":%q,`, srv.AdminSecret()), 1)
	res, err := http.Post("http://"+srv.AdminAddr()+"/admin", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("admin %s: %v", body, err)
	}
	defer res.Body.Close()
	dec := json.NewDecoder(res.Body)
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("admin %s: %v", body, err)
	}
}

// pathEstimate is the bwe part of handle_info: strata's estimate of the path towards the browser.
type pathEstimate struct {
	TWCC      bool `json:"twcc"`
	Feedback  int  `json:"feedback_packets"`
	Estimator struct {
		Algorithm string  `json:"algorithm"`
		Target    float64 `json:"target_bps"`
		Usage     string  `json:"usage"`
	} `json:"estimator"`
}

// requireEstimate waits until the only handle on srv shows a send-side estimate fed by the
// browser's TWCC feedback, and returns it.
func requireEstimate(t *testing.T, srv *server.Server, timeout time.Duration) pathEstimate {
	t.Helper()
	var last pathEstimate
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		for _, sid := range adminSessions(t, srv) {
			var handles struct {
				Handles []json.Number `json:"handles"`
			}
			adminCall(t, srv, fmt.Sprintf(`{"janus":"list_handles","session_id":%s}`, sid), &handles)
			for _, hid := range handles.Handles {
				var info struct {
					Info struct {
						WebRTC struct {
							BWE pathEstimate `json:"bwe"`
						} `json:"webrtc"`
					} `json:"info"`
				}
				adminCall(t, srv, fmt.Sprintf(`{"janus":"handle_info","session_id":%s,"handle_id":%s}`, sid, hid), &info)
				last = info.Info.WebRTC.BWE
				if last.TWCC && last.Feedback > 0 && last.Estimator.Algorithm != "" && last.Estimator.Target > 0 {
					return last
				}
			}
		}
	}
	t.Fatalf("handle_info showed no estimate of the path to the browser within %v; last: %+v", timeout, last)
	return last
}
