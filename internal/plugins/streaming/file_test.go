package streaming_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileMountpoints: Janus's sample files as a live mountpoint (A-law, one playback for all)
// and an ondemand one (µ-law, a playback per viewer); a file whose content is not what its name
// says is refused at create; a live file mountpoint is not a switch target (Janus: only live RTP).
func TestFileMountpoints(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	live, _ := request(t, admin, map[string]any{"request": "create", "type": "live", "id": 2,
		"filename": "/usr/share/janus/streams/radio.alaw", "audio": true}, nil)
	ondemand, _ := request(t, admin, map[string]any{"request": "create", "type": "ondemand", "id": 3,
		"filename": "/usr/share/janus/streams/music.mulaw", "audio": true}, nil)
	if live["streaming"] != "created" || ondemand["streaming"] != "created" {
		t.Fatalf("create: %v %v", live, ondemand)
	}
	if typ := ondemand["stream"].(map[string]any)["type"]; typ != "on demand" {
		t.Errorf("ondemand mountpoint of type %v", typ)
	}
	info, _ := request(t, admin, map[string]any{"request": "info", "id": 2}, nil)
	m := info["info"].(map[string]any)["media"].([]any)[0].(map[string]any)
	if m["codec"] != "pcma" || m["rtpmap"] != "PCMA/8000" || m["mid"] != "a" {
		t.Errorf("live file info: %v", info)
	}
	for _, id := range []uint64{2, 3, 3} {
		v := watch(t, c, id, nil)
		v.waitPackets("a", 50, 10*time.Second) // 1 s of 20 ms frames
	}
	fake := filepath.Join(t.TempDir(), "fake.opus")
	if err := os.WriteFile(fake, []byte("this is not an Ogg file"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantError(t, admin, map[string]any{"request": "create", "type": "ondemand", "filename": fake, "audio": true}, 456, "error opening file")
	wantError(t, admin, map[string]any{"request": "create", "type": "live", "filename": "/nonexistent.alaw", "audio": true}, 456, "error opening file")
	wantError(t, admin, map[string]any{"request": "recording", "action": "start", "id": 2, "audio": "x"}, 452, "only available on RTP-based live streams")
	rtp := createRTP(t, admin, map[string]any{"type": "audio", "mid": "a", "port": 0, "pt": 8, "codec": "pcma"})
	v := watch(t, c, rtp.id, nil)
	wantError(t, v.h, map[string]any{"request": "switch", "id": 2}, 458, "Can't switch: target is not a live RTP mountpoint")
	f := watch(t, c, 2, nil)
	wantError(t, f.h, map[string]any{"request": "switch", "id": rtp.id}, 458, "Can't switch: not on a live RTP mountpoint")
}
