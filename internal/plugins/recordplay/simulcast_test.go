package recordplay_test

import (
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/record"
)

// A client that sends simulcast gets its highest stream recorded, as Janus records it, and none of
// the others.
func TestRecordsTheHighestSimulcastStream(t *testing.T) {
	dir := t.TempDir()
	_, h := startServer(t, dir)
	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	vp8 := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}
	var tracks []*webrtc.TrackLocalStaticRTP
	for _, rid := range []string{"h", "m", "l"} { // highest first, as browsers offer them
		tr, err := webrtc.NewTrackLocalStaticRTP(vp8, "video", "sim", webrtc.WithRTPStreamID(rid))
		if err != nil {
			t.Fatal(err)
		}
		tracks = append(tracks, tr)
	}
	sender, err := pc.AddTrack(tracks[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range tracks[1:] {
		if err := sender.AddEncoding(tr); err != nil {
			t.Fatal(err)
		}
	}
	o, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, answer := janustest.MustRequest(t, h, map[string]any{"request": "record", "id": 9, "name": "simulcast"}, janustest.CompleteLocal(t, pc, o))
	if r, _ := data["result"].(map[string]any); r["status"] != "recording" {
		t.Fatalf("record: %v", data)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	var midID, ridID uint8
	for _, e := range sender.GetParameters().HeaderExtensions {
		switch e.URI {
		case sdp.SDESMidURI:
			midID = uint8(e.ID)
		case sdp.SDESRTPStreamIDURI:
			ridID = uint8(e.ID)
		}
	}
	// 1.5 s of 50 frames a second on each stream, each payload tagged with its stream.
	for i := 0; i < 75; i++ {
		for layer, tr := range tracks {
			payload := []byte{0x10, 0x00, 0x9d, 0x01, 0x2a, 0x10, 0x00, 'a' + byte(layer)}
			if i > 0 {
				payload[1] = 0x01 // an inter frame
			}
			p := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: uint16(1000*layer + i),
				Timestamp: uint32(1800 * i), Marker: true}, Payload: payload}
			_ = p.SetExtension(midID, []byte("0"))
			_ = p.SetExtension(ridID, []byte(tr.RID()))
			_ = tr.WriteRTP(p)
		}
		time.Sleep(20 * time.Millisecond)
	}
	janustest.MustRequest(t, h, map[string]any{"request": "stop"}, nil)
	janustest.WaitEvent(t, h, 5*time.Second, func(d map[string]any) bool { return d["result"] == "done" })

	r, err := record.OpenMJR(filepath.Join(dir, "rec-9-video.mjr"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var p rtp.Packet
		if err := p.Unmarshal(f.RTP); err != nil {
			t.Fatal(err)
		}
		if tag := p.Payload[len(p.Payload)-1]; tag != 'a' {
			t.Fatalf("recorded a packet of stream %c, want only the highest (a)", tag)
		}
		n++
	}
	if n < 40 {
		t.Errorf("recorded %d packets of the highest stream, want about 75", n)
	}
}
