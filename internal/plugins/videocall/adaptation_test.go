package videocall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/server"
)

// Layer sizes of the caller's simulcast, lowest first: about 90 kbit/s, 300 kbit/s and 1.25 Mbit/s
// at 50 frames a second.
var layerFrameBytes = []int{200, 700, 3000}

// The claim: each direction of a call adapts to its receiver's downlink. Alice sends three
// simulcast layers; Bob's downlink takes 450 kbit/s. In at least two of three 3 s windows strata
// sends Bob a lower layer most of the time and well under Alice's top layer's rate, while it still receives all of
// Alice's layers (three SSRCs, at more than 1.5 times what it sends Bob; relaying her top layer
// would be about 1.3 times): nothing of Bob's downlink is pushed back to her uplink. The allocator
// probes the top layer now and then and falls back, so one window may hold such an excursion. Janus
// relays the chosen substream whatever the receiver's downlink. (What Bob sends Alice is not
// checked: Pion, as her browser, drops a single stream on her simulcast m-line; see
// TestSimulcastCallerAndSubstream.)
func TestCallAdaptsToTheCalleesDownlink(t *testing.T) {
	srv, c := janustest.Start(t, nil, janustest.Logger())
	alice := newUser(t, c, "alice", "h", "m", "l")
	alice.frameBytes = layerFrameBytes
	bob := newLimitedUser(t, c, "bob", &peertest.RateLimit{BPS: 450_000})
	connect(t, alice, bob)
	bob.received(50, 20*time.Second)
	waitFor(t, "bob below the top layer", func() bool { return bob.lastTag.Load() != 'c' })
	// The estimate settles: the allocator's first probes above the downlink end in loss.
	time.Sleep(3 * time.Second)

	// Three windows of 3 s: the allocator probes the top layer now and then and falls back, and on
	// a loaded machine (this test also runs under the race detector) a probe can fill most of one
	// window; the call adapts if two windows of three hold a lower layer.
	const window = 3 * time.Second
	var failures []string
	for range 3 {
		if why := adaptedWindow(t, srv, alice, bob, window); why != "" {
			failures = append(failures, why)
		}
	}
	if len(failures) > 1 {
		t.Errorf("bob's call did not adapt to his 450 kbit/s downlink in %d of 3 windows:\n%s", len(failures), strings.Join(failures, "\n"))
	}
	if ssrcs := len(video(t, srv, alice).Peers); ssrcs != 3 {
		t.Errorf("alice's video m-line has %d incoming SSRCs, want her 3 layers", ssrcs)
	}
}

// adaptedWindow measures one window of the call: "" when strata received all of Alice's layers
// (at more than 1.5 times what it sent Bob), sent Bob well under her top layer's rate, and a lower
// layer most of the time; otherwise what was wrong.
func adaptedWindow(t *testing.T, srv *server.Server, alice, bob *user, window time.Duration) string {
	in0, out0 := video(t, srv, alice).In.Bytes, video(t, srv, bob).Out.Bytes
	var tagged0 [3]int64
	for i := range tagged0 {
		tagged0[i] = bob.tagged[i].Load()
	}
	time.Sleep(window)
	in, out := video(t, srv, alice).In.Bytes-in0, video(t, srv, bob).Out.Bytes-out0
	var tagged [3]int64
	var total int64
	for i := range tagged {
		tagged[i] = bob.tagged[i].Load() - tagged0[i]
		total += tagged[i]
	}
	inRate, outRate := float64(in*8)/window.Seconds(), float64(out*8)/window.Seconds()
	t.Logf("strata received %.0f kbit/s of alice's video, sent bob %.0f kbit/s; bob's packets per layer (low to high) %v",
		inRate/1000, outRate/1000, tagged)
	// Rates, not absolute figures, on a shared machine: the test's sender may fall behind its clock.
	switch {
	case inRate < 1.5*outRate:
		return fmt.Sprintf("strata received %.0f kbit/s of alice's three layers and sent bob %.0f kbit/s: want alice's uplink untouched, well above bob's downlink", inRate/1000, outRate/1000)
	case outRate > 1_000_000:
		return fmt.Sprintf("strata sent bob %.0f kbit/s over a 450 kbit/s downlink, want well under the top layer's 1.25 Mbit/s", outRate/1000)
	case total == 0 || tagged[2]*4 > total:
		return fmt.Sprintf("bob received %v packets per layer, want a lower layer most of the time", tagged)
	}
	return ""
}

// mline is one m-line of the admin API's handle_info ("webrtc.media").
type mline struct {
	Type  string   `json:"type"`
	Peers []uint32 `json:"ssrc-peer"`
	In    struct {
		Bytes uint64 `json:"bytes"`
	} `json:"in"`
	Out struct {
		Bytes uint64 `json:"bytes"`
	} `json:"out"`
}

// handleInfo is u's handle_info, asked of the gateway's admin API.
func handleInfo(t *testing.T, srv *server.Server, u *user) []byte {
	t.Helper()
	req := fmt.Sprintf(`{"janus":"handle_info","transaction":"i","admin_secret":%q,"session_id":%d,"handle_id":%d}`,
		srv.AdminSecret(), u.sessionID, u.h.ID)
	raw, err := json.Marshal(srv.Gateway().Admin(context.Background(), []byte(req), gateway.Origin{}))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// video is the handle_info of u's video m-line.
func video(t *testing.T, srv *server.Server, u *user) mline {
	t.Helper()
	raw := handleInfo(t, srv, u)
	var r struct {
		Info struct {
			WebRTC struct {
				Media map[string]mline `json:"media"`
			} `json:"webrtc"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("handle_info: %v: %s", err, raw)
	}
	for _, m := range r.Info.WebRTC.Media {
		if m.Type == "video" {
			return m
		}
	}
	t.Fatalf("handle_info of %s: no video m-line: %s", u.name, raw)
	return mline{}
}
