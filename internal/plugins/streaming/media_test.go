package streaming_test

import (
	"testing"
	"time"
)

// TestWatchDecodes: an rtp mountpoint fed by ffmpeg (Opus and VP8, VP9 or H.264), watched by a Pion
// viewer through the Janus API; the viewer writes the video it receives to a file that ffmpeg
// decodes without error, frames counted.
func TestWatchDecodes(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	for _, codec := range []string{"vp8", "vp9", "h264"} {
		t.Run(codec, func(t *testing.T) {
			mp := createRTP(t, admin,
				map[string]any{"type": "audio", "mid": "a", "port": 0, "pt": 111, "codec": "opus"},
				map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": codec})
			v := watch(t, c, mp.id, nil)
			args := append(testsrc("320x240"), videoArgs(codec, "400k")...)
			args = append(args, rtpOut(mp.port(t, "v", "port"), 100)...)
			args = append(args, audioArgs()...)
			args = append(args, rtpOut(mp.port(t, "a", "port"), 111)...)
			ffmpeg(t, args...)
			v.waitEvent(10*time.Second, func(e map[string]any) bool {
				r, _ := e["result"].(map[string]any)
				return r["status"] == "started"
			})
			v.waitFrames("v", 45, 15*time.Second)
			v.waitPackets("a", 50, 10*time.Second)
			frames, width := v.decodedFrames("v")
			t.Logf("%s: %d frames decoded (width %d), %d audio packets", codec, frames, width, v.count("a"))
			if frames < 45 || width != 320 {
				t.Errorf("%s: %d frames of width %d decoded, want at least 45 of 320", codec, frames, width)
			}
		})
	}
}
