package streaming_test

import (
	"testing"
	"time"
)

// TestSwitch: a viewer switches from one rtp mountpoint to another (same codec, another picture
// size) on the same PeerConnection: no new offer, the same track, and what it decodes changes to
// the other source's pictures.
func TestSwitch(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	video := map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp8"}
	small, large := createRTP(t, admin, video), createRTP(t, admin, video)
	args := []string{"-re", "-f", "lavfi", "-i", "testsrc=size=320x180:rate=30", "-filter_complex", "[0:v]split=2[a][b];[a]scale=160:90[s]"}
	for _, out := range []struct {
		label string
		port  int
	}{{"[s]", small.port(t, "v", "port")}, {"[b]", large.port(t, "v", "port")}} {
		args = append(args, "-map", out.label, "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "16", "-threads", "1",
			"-g", "15", "-b:v", "150k")
		args = append(args, rtpOut(out.port, 100)...)
	}
	ffmpeg(t, args...)
	v := watch(t, c, small.id, nil)
	if w := widthNow(t, v, 15*time.Second, func(w int) bool { return w == 160 }); w != 160 {
		t.Fatalf("viewer of the small mountpoint decodes width %d", w)
	}
	v.mu.Lock()
	ssrc := v.ssrcs["v"]
	v.mu.Unlock()
	data, jsep := request(t, v.h, map[string]any{"request": "switch", "id": large.id}, nil)
	res := data["result"].(map[string]any)
	if res["switched"] != "ok" || res["id"] != float64(large.id) || jsep != nil {
		t.Fatalf("switch: %v %v", data, jsep)
	}
	if w := widthNow(t, v, 10*time.Second, func(w int) bool { return w == 320 }); w != 320 {
		t.Fatalf("after the switch the viewer decodes width %d, want 320", w)
	}
	v.mu.Lock()
	same := v.ssrcs["v"] == ssrc
	v.mu.Unlock()
	if !same || v.pc.SignalingState().String() != "stable" {
		t.Errorf("the switch changed the track (SSRC %d → %d) or the signalling state (%v)", ssrc, v.ssrcs["v"], v.pc.SignalingState())
	}
	v.waitFrames("v", 30, 10*time.Second)
	frames, _ := v.decodedFrames("v")
	if frames < 30 {
		t.Errorf("%d frames decoded across the switch", frames)
	}
	// Both mountpoints list the viewer where it is now.
	info, _ := request(t, admin, map[string]any{"request": "info", "id": large.id}, nil)
	if n := info["info"].(map[string]any)["viewers"]; n != float64(1) {
		t.Errorf("target mountpoint has %v viewers, want 1", n)
	}
	info, _ = request(t, admin, map[string]any{"request": "info", "id": small.id}, nil)
	if n := info["info"].(map[string]any)["viewers"]; n != float64(0) {
		t.Errorf("source mountpoint has %v viewers, want 0", n)
	}
}
