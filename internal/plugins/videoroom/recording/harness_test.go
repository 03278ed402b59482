package recording_test

import (
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
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
	return janustest.Attach(t, c, videoroom.Package)
}

func clientAPI(t testing.TB) *webrtc.API {
	t.Helper()
	return peertest.BrowserAPI(t)
}

// subscriber receives every stream of a feed and counts the packets.
type subscriber struct{ packets atomic.Int64 }

func (s *subscriber) count() int { return int(s.packets.Load()) }

func subscribe(t *testing.T, c *janusclient.Client, room, feed uint64) *subscriber {
	t.Helper()
	h := attach(t, c)
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
