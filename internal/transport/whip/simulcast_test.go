package whip_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/server"
)

// TestWHIPSimulcastPublisher publishes three simulcast layers (rids, as OBS 31 and browsers send
// them) over WHIP: the videoroom takes them as a simulcast stream, which a Janus-API subscriber is
// told about and gets video, and a WHEP viewer gets video through its own allocator, over its own
// bandwidth estimate (its TWCC feedback, seen in the admin API's handle_info).
func TestWHIPSimulcastPublisher(t *testing.T) {
	srv := startServer(t, func(c *config.Config) {
		c.Transports.Admin.Enabled = true
		c.Transports.Admin.Listen = "127.0.0.1:0"
	})
	base := "http://" + srv.HTTPAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	vp8 := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}
	var layers []*webrtc.TrackLocalStaticRTP
	var sender *webrtc.RTPSender
	for _, rid := range []string{"f", "h", "q"} {
		tr, err := webrtc.NewTrackLocalStaticRTP(vp8, "video", "whip", webrtc.WithRTPStreamID(rid))
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, tr)
		if sender == nil {
			if sender, err = pc.AddTrack(tr); err != nil {
				t.Fatal(err)
			}
		} else if err := sender.AddEncoding(tr); err != nil {
			t.Fatal(err)
		}
	}
	o, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	<-gathered
	resp, answer := do(t, "POST", base+"/whip/endpoint/1234", "application/sdp", pc.LocalDescription().SDP, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d %s", resp.StatusCode, answer)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	// A browser marks simulcast packets with mid and rid; Pion leaves that to the application.
	var midID, ridID uint8
	for _, e := range sender.GetParameters().HeaderExtensions {
		switch e.URI {
		case sdp.SDESMidURI:
			midID = uint8(e.ID)
		case sdp.SDESRTPStreamIDURI:
			ridID = uint8(e.ID)
		}
	}
	mid := pc.GetTransceivers()[0].Mid()
	go func() {
		for seq := uint16(0); ctx.Err() == nil; seq++ {
			for i, l := range layers {
				// A VP8 keyframe with the payload descriptor simulcast needs: picture id (15 bits),
				// TL0PICIDX and temporal layer 0, so the subscriber's rewriter can splice layers.
				pic := seq & 0x7fff
				payload := []byte{0x90, 0xe0, 0x80 | byte(pic>>8), byte(pic), byte(seq), 0x20,
					0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00, 0, 0, 0, 0, 0}
				pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: uint32(seq) * 3000, Marker: true}, Payload: payload}
				_ = pkt.SetExtension(midID, []byte(mid))
				_ = pkt.SetExtension(ridID, []byte([]string{"f", "h", "q"}[i]))
				_ = l.WriteRTP(pkt)
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()

	sess, _, feed := waitForPublisher(t, ctx, base)
	sub, err := sess.Attach(ctx, "janus.plugin.videoroom")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := sub.Message(ctx, map[string]any{"request": "join", "ptype": "subscriber", "room": 1234, "streams": []map[string]any{{"feed": feed}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var attached struct {
		Streams []struct {
			Type      string          `json:"type"`
			Simulcast json.RawMessage `json:"simulcast"`
		} `json:"streams"`
	}
	if err := ev.DecodeData(&attached); err != nil {
		t.Fatal(err)
	}
	if len(attached.Streams) != 1 || attached.Streams[0].Type != "video" || attached.Streams[0].Simulcast == nil {
		t.Errorf("the WHIP publisher's video is not a simulcast stream to a Janus-API subscriber: %+v", attached.Streams)
	}

	{ // the Janus-API subscriber gets the video too
		spc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
		if err != nil {
			t.Fatal(err)
		}
		defer spc.Close()
		got := make(chan struct{}, 1)
		spc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
			if _, _, err := tr.ReadRTP(); err == nil {
				select {
				case got <- struct{}{}:
				default:
				}
			}
		})
		_ = spc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: ev.JSEP.SDP})
		a, _ := spc.CreateAnswer(nil)
		g := webrtc.GatheringCompletePromise(spc)
		_ = spc.SetLocalDescription(a)
		<-g
		if _, err := sub.Message(ctx, map[string]any{"request": "start"}, &janusclient.JSEP{Type: "answer", SDP: spc.LocalDescription().SDP}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
		case <-ctx.Done():
			t.Fatal("the Janus-API subscriber got no video from the simulcast WHIP publisher")
		}
	}
	v := newWHEPViewer(t)
	v.watch(t, base+"/whep/endpoint/1234/"+jsonNumber(feed))
	v.waitVideo(t, ctx, "WHEP viewer of a simulcast WHIP publisher")
	// The viewer's TWCC feedback reaches its own estimator, which its allocator allocates with.
	for whepEstimate(t, srv) == 0 {
		if ctx.Err() != nil {
			t.Fatal("no TWCC feedback from the WHEP viewer reached its estimator")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func jsonNumber(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// adminJSON runs an admin request in-process and returns its reply as JSON values.
func adminJSON(t *testing.T, srv *server.Server, req map[string]any) map[string]any {
	t.Helper()
	req["transaction"], req["admin_secret"] = "t", srv.AdminSecret()
	raw, _ := json.Marshal(req)
	reply, err := json.Marshal(srv.Gateway().Admin(context.Background(), raw, gateway.Origin{}))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(reply, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// whepEstimate finds the WHEP viewer's handle (a videoroom subscriber of the WHIP transport) and
// returns its congestion controller's feedback count: each viewer has its own estimate.
func whepEstimate(t *testing.T, srv *server.Server) float64 {
	t.Helper()
	sessions, _ := adminJSON(t, srv, map[string]any{"janus": "list_sessions"})["sessions"].([]any)
	for _, s := range sessions {
		handles, _ := adminJSON(t, srv, map[string]any{"janus": "list_handles", "session_id": s})["handles"].([]any)
		for _, h := range handles {
			info, _ := adminJSON(t, srv, map[string]any{"janus": "handle_info", "session_id": s, "handle_id": h})["info"].(map[string]any)
			ps, _ := info["plugin_specific"].(map[string]any)
			if info["opaque_id"] == nil || !strings.HasPrefix(info["opaque_id"].(string), "whep-") || ps["type"] != "subscriber" {
				continue
			}
			webrtcInfo, _ := info["webrtc"].(map[string]any)
			bwe, _ := webrtcInfo["bwe"].(map[string]any)
			if bwe["estimator"] == nil {
				t.Fatalf("the WHEP viewer has no estimator: %v", bwe)
			}
			n, _ := bwe["feedback_packets"].(float64)
			return n
		}
	}
	t.Fatal("no WHEP viewer handle in the admin API")
	return 0
}
