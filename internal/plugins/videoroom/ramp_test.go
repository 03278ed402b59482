package videoroom_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
)

// TestEstimateRampsByProbing: a subscriber's bandwidth estimate must reach 1.2 Mbit/s (a 720p
// camera layer) quickly on a clean path. The allocator sends GCC's probe clusters (its initial 3×
// and 6× probes, then further ones) as padding the estimator measures; before, nothing sent them and
// the estimate grew from its 300 kbit/s start by AIMD alone, about 8 % a second.
func TestEstimateRampsByProbing(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	admin := "http://" + freeAddr(t) + "/admin"
	c := startServer(t, func(cfg *config.Config) {
		cfg.Transports.Admin.Enabled = true
		cfg.Transports.Admin.Listen = strings.TrimSuffix(strings.TrimPrefix(admin, "http://"), "/admin")
		cfg.Transports.Admin.AdminSecret = adminSecret
	})
	h := attach(t, c)
	const room = 4345
	mustRequest(t, h, map[string]any{"request": "create", "room": room, "publishers": 2}, nil)
	pub := startPublisher(t, c, room, "camera")
	waitActive(t, h, room, pub.id)
	start := time.Now()
	sub := subscribe(t, c, room, pub.id, nil)
	const want = 1_200_000
	var reached time.Duration = -1
	var last float64
	for time.Since(start) < 5*time.Second {
		if est, ok := subscriberEstimate(t, admin); ok {
			last = est
			if est >= want {
				reached = time.Since(start)
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	top := sub.waitFrame(start, 5*time.Second, func(l int) bool { return l == 2 })
	t.Logf("estimate at 1.2 Mbit/s %v after subscribing (last seen %.0f bit/s); top layer %v", reached.Round(time.Millisecond), last, top.Round(time.Millisecond))
	if reached < 0 || reached > 2*time.Second {
		t.Errorf("estimate %.0f bit/s, not 1.2 Mbit/s within 2 s of subscribing (reached at %v)", last, reached)
	}
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// subscriberEstimate finds the (only) videoroom subscriber through the admin API and returns its
// send-side estimate.
func subscriberEstimate(t *testing.T, admin string) (float64, bool) {
	t.Helper()
	var est float64
	found := forEachHandleInfo(admin, func(info map[string]any) bool {
		ps, _ := info["plugin_specific"].(map[string]any)
		if ps == nil || ps["type"] != "subscriber" {
			return false
		}
		webrtc, _ := info["webrtc"].(map[string]any)
		bwe, _ := webrtc["bwe"].(map[string]any)
		estimator, _ := bwe["estimator"].(map[string]any)
		est, _ = estimator["target_bps"].(float64)
		return true
	})
	return est, found
}

// adminSecret is the admin secret of the tests that enable the admin API.
const adminSecret = "test-admin-secret"

// forEachHandleInfo calls f with the handle_info of every handle of every session (through the
// admin API) until f returns true; it reports whether one did.
func forEachHandleInfo(admin string, f func(info map[string]any) bool) bool {
	call := func(body string, out any) bool {
		resp, err := http.Post(admin, "application/json", strings.NewReader(body))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return json.Unmarshal(raw, out) == nil
	}
	var sessions struct {
		Sessions []uint64 `json:"sessions"`
	}
	if !call(`{"janus":"list_sessions","transaction":"l","admin_secret":"`+adminSecret+`"}`, &sessions) {
		return false
	}
	for _, sid := range sessions.Sessions {
		var handles struct {
			Handles []uint64 `json:"handles"`
		}
		if !call(fmt.Sprintf(`{"janus":"list_handles","transaction":"l","admin_secret":"`+adminSecret+`","session_id":%d}`, sid), &handles) {
			continue
		}
		for _, hid := range handles.Handles {
			var reply struct {
				Info map[string]any `json:"info"`
			}
			body := fmt.Sprintf(`{"janus":"handle_info","transaction":"i","admin_secret":"`+adminSecret+`","session_id":%d,"handle_id":%d}`, sid, hid)
			if call(body, &reply) && reply.Info != nil && f(reply.Info) {
				return true
			}
		}
	}
	return false
}
