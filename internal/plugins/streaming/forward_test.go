package streaming_test

import (
	"net"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient/janustest"
)

// TestVideoRoomForward: a videoroom publisher's video, rtp_forward'ed by the same strata into a
// streaming mountpoint's port (the classic way to fan a room out), reaches a streaming viewer, who
// decodes it.
func TestVideoRoomForward(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mp := createRTP(t, admin, map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp8"})

	room := janustest.Attach(t, c, "janus.plugin.videoroom")
	const roomID = 7714
	request(t, room, map[string]any{"request": "create", "room": roomID}, nil)
	joined, _ := request(t, room, map[string]any{"request": "join", "ptype": "publisher", "room": roomID}, nil)
	pubID := joined["id"]

	pc, err := clientAPI(t, nil).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	track, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "video", "pub")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTransceiverFromTrack(track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly}); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, answer := request(t, room, map[string]any{"request": "publish"}, janustest.CompleteLocal(t, pc, offer))
	if answer == nil {
		t.Fatal("publish: no answer")
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}

	// ffmpeg's VP8 RTP is the publisher's camera.
	in, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	go func() {
		buf := make([]byte, 1500)
		var pkt rtp.Packet
		for {
			n, err := in.Read(buf)
			if err != nil {
				return
			}
			if pkt.Unmarshal(buf[:n]) == nil {
				_ = track.WriteRTP(&pkt)
			}
		}
	}()
	args := append(testsrc("320x180")[:5], videoArgs("vp8", "200k")...)
	args = append(args, rtpOut(in.LocalAddr().(*net.UDPAddr).Port, 100)...)
	ffmpeg(t, args...)

	deadline := time.Now().Add(15 * time.Second)
	for {
		fwd, _, err := janustest.Request(t, room, map[string]any{"request": "rtp_forward", "room": roomID, "publisher_id": pubID,
			"host": "127.0.0.1", "streams": []map[string]any{{"mid": "0", "port": mp.port(t, "v", "port")}}}, nil)
		if err == nil && fwd["videoroom"] == "rtp_forward" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rtp_forward: %v %v", fwd, err)
		}
		time.Sleep(200 * time.Millisecond) // until the publisher's stream exists
	}
	v := watch(t, c, mp.id, nil)
	v.waitPackets("v", 1, 15*time.Second)
	v.waitFrames("v", 45, 15*time.Second)
	frames, width := v.decodedFrames("v")
	t.Logf("forwarded: %d frames decoded, width %d", frames, width)
	if frames < 45 || width != 320 {
		t.Errorf("%d frames of width %d decoded from the forwarded stream", frames, width)
	}
}
