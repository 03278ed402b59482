package recording_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
	"github.com/strata-rtc/strata/internal/server"
)

var (
	request     = janustest.Request
	mustRequest = janustest.MustRequest
	wantCode    = janustest.WantCode
)

func startServerLogged(t testing.TB, edit func(*config.Config), log *slog.Logger) *janusclient.Client {
	t.Helper()
	return janustest.StartServer(t, edit, log)
}

func startServer(t testing.TB, edit func(*config.Config)) *janusclient.Client {
	t.Helper()
	return janustest.StartServer(t, edit, janustest.Logger())
}

func attach(t testing.TB, c *janusclient.Client) *janusclient.Handle {
	t.Helper()
	_, h := attachIn(t, c)
	return h
}

// attachIn is attach that also returns the session's id.
func attachIn(t testing.TB, c *janusclient.Client) (uint64, *janusclient.Handle) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Attach(ctx, videoroom.Package)
	if err != nil {
		t.Fatal(err)
	}
	return s.ID, h
}

// pluginInfo is the plugin_specific part of the admin API's handle_info for a handle.
func pluginInfo(t testing.TB, srv *server.Server, session, handle uint64) map[string]any {
	t.Helper()
	raw := fmt.Sprintf(`{"janus":"handle_info","transaction":"i","admin_secret":%q,"session_id":%d,"handle_id":%d}`,
		srv.AdminSecret(), session, handle)
	b, err := json.Marshal(srv.Gateway().Admin(context.Background(), []byte(raw), gateway.Origin{}))
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Info struct {
			PluginSpecific map[string]any `json:"plugin_specific"`
		} `json:"info"`
	}
	if err := json.Unmarshal(b, &reply); err != nil || reply.Info.PluginSpecific == nil {
		t.Fatalf("handle_info: %s (%v)", b, err)
	}
	return reply.Info.PluginSpecific
}

func clientAPI(t testing.TB) *webrtc.API {
	t.Helper()
	return peertest.BrowserAPI(t)
}

// waitPublishing waits until the room lists feed as publishing: the server makes a publisher
// subscribable once its PeerConnection is up on its side, which can come a little after the
// publisher's client saw it connected.
func waitPublishing(t *testing.T, h *janusclient.Handle, room, feed uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := mustRequest(t, h, map[string]any{"request": "listparticipants", "room": room}, nil)
		ps, _ := data["participants"].([]any)
		for _, x := range ps {
			if p, _ := x.(map[string]any); p["id"] == float64(feed) && p["publisher"] == true {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("feed %d is not publishing in room %d: %v", feed, room, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// subscriber receives every stream of a feed and counts the packets.
type subscriber struct{ packets atomic.Int64 }

func (s *subscriber) count() int { return int(s.packets.Load()) }

func subscribe(t *testing.T, c *janusclient.Client, room, feed uint64) *subscriber {
	t.Helper()
	h := attach(t, c)
	waitPublishing(t, h, room, feed)
	data, offer := mustRequest(t, h, map[string]any{"request": "join", "ptype": "subscriber", "room": room, "streams": []map[string]any{{"feed": feed}}}, nil)
	if data["videoroom"] != "attached" || offer == nil {
		t.Fatalf("subscribe: %v", data)
	}
	pc, err := clientAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	s := &subscriber{}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			s.packets.Add(1)
		}
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		t.Fatal(err)
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if started, _ := mustRequest(t, h, map[string]any{"request": "start"}, janustest.CompleteLocal(t, pc, answer)); started["started"] != "ok" {
		t.Fatalf("start: %v", started)
	}
	return s
}
