package videoroom_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer/peertest"
)

// surroundAPI is a browser whose offers carry multichannel Opus (5.1) in place of Opus, as Janus's
// multiopus demo makes Chrome's.
func surroundAPI(t *testing.T) *webrtc.API {
	return peertest.BrowserAPIWith(t, func(me *webrtc.MediaEngine) error {
		return me.RegisterCodec(webrtc.RTPCodecParameters{PayloadType: 111, RTPCodecCapability: webrtc.RTPCodecCapability{
			MimeType: "audio/multiopus", ClockRate: 48000, Channels: 6,
			SDPFmtpLine: "minptime=10;useinbandfec=1;channel_mapping=0,4,1,2,3,5;num_streams=4;coupled_streams=2",
		}}, webrtc.RTPCodecTypeAudio)
	})
}

// TestMultiopusRoom: a room whose audiocodec is multiopus takes a publisher's 5.1 audio, lists it
// as "multiopus", offers it to a subscriber as multiopus/48000/6 with the channel mapping, and
// forwards its packets unchanged.
func TestMultiopusRoom(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	const room = 5151
	mustRequest(t, admin, map[string]any{"request": "create", "room": room, "audiocodec": "multiopus", "videocodec": "vp8"}, nil)

	pub := attach(t, c)
	joined, _ := mustRequest(t, pub, map[string]any{"request": "join", "ptype": "publisher", "room": room, "display": "surround"}, nil)
	feed := uint64(joined["id"].(float64))
	pc, err := surroundAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	track, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: "audio/multiopus", ClockRate: 48000, Channels: 6,
		SDPFmtpLine: "minptime=10;useinbandfec=1;channel_mapping=0,4,1,2,3,5;num_streams=4;coupled_streams=2"}, "audio", "surround")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTrack(track); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, answer := mustRequest(t, pub, map[string]any{"request": "publish", "audiocodec": "multiopus"}, completeLocal(t, pc, offer))
	if data["configured"] != "ok" || answer == nil || !strings.Contains(answer.SDP, "multiopus/48000/6") {
		t.Fatalf("publish: %v %v", data, answer)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			payload := make([]byte, 100)
			binary.BigEndian.PutUint32(payload, uint32(i))
			_ = track.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: uint16(i), Timestamp: uint32(960 * i)}, Payload: payload})
		}
	}()

	waitActive(t, admin, room, feed) // a feed exists for subscribers once its media is up
	sub := attach(t, c)
	attached, subOffer := mustRequest(t, sub, map[string]any{"request": "join", "ptype": "subscriber", "room": room, "streams": []map[string]any{{"feed": feed}}}, nil)
	streams, _ := attached["streams"].([]any)
	if len(streams) != 1 || streams[0].(map[string]any)["codec"] != "multiopus" || subOffer == nil {
		t.Fatalf("attached: %v", attached)
	}
	for _, want := range []string{"multiopus/48000/6", "channel_mapping=0,4,1,2,3,5;num_streams=4;coupled_streams=2"} {
		if !strings.Contains(subOffer.SDP, want) {
			t.Fatalf("the subscriber's offer lacks %q:\n%s", want, subOffer.SDP)
		}
	}
	spc, err := surroundAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = spc.Close() })
	got := make(chan *rtp.Packet, 256)
	codec := make(chan string, 1)
	spc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		codec <- tr.Codec().MimeType
		for {
			p, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			select {
			case got <- p:
			default:
			}
		}
	})
	if err := spc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: subOffer.SDP}); err != nil {
		t.Fatal(err)
	}
	subAnswer, err := spc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if started, _ := mustRequest(t, sub, map[string]any{"request": "start"}, completeLocal(t, spc, subAnswer)); started["started"] != "ok" {
		t.Fatalf("start: %v", started)
	}
	select {
	case m := <-codec:
		if !strings.EqualFold(m, "audio/multiopus") {
			t.Fatalf("the subscriber receives %s", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no audio track at the subscriber within 10 s")
	}
	var last uint32
	for n := 0; n < 30; n++ {
		select {
		case p := <-got:
			idx := binary.BigEndian.Uint32(p.Payload)
			if len(p.Payload) != 100 || (n > 0 && idx <= last) {
				t.Fatalf("forwarded packet %d: %d bytes after packet %d", idx, len(p.Payload), last)
			}
			last = idx
		case <-time.After(10 * time.Second):
			t.Fatalf("%d multiopus packets at the subscriber within 10 s, want 30", n)
		}
	}
}
