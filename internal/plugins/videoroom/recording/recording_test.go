package recording_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/record/rectest"
)

// avPublisher publishes one Opus and one VP8 track (the load generator's real clips).
type avPublisher struct {
	session      uint64
	h            *janusclient.Handle
	pc           *webrtc.PeerConnection
	id           uint64
	audio, video *webrtc.TrackLocalStaticRTP
}

// publishAV joins room and publishes with the extra fields of publish (record, filename, secret).
func publishAV(t *testing.T, c *janusclient.Client, room uint64, publish map[string]any) *avPublisher {
	t.Helper()
	p := &avPublisher{}
	p.session, p.h = attachIn(t, c)
	joined, _ := mustRequest(t, p.h, map[string]any{"request": "join", "ptype": "publisher", "room": room}, nil)
	p.id = uint64(joined["id"].(float64))
	pc, err := clientAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	p.pc = pc
	connected := make(chan struct{})
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateConnected {
			close(connected)
		}
	})
	if p.audio, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "pub"); err != nil {
		t.Fatal(err)
	}
	if p.video, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "video", "pub"); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []*webrtc.TrackLocalStaticRTP{p.audio, p.video} {
		s, err := pc.AddTrack(tr)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				if _, _, err := s.ReadRTCP(); err != nil {
					return
				}
			}
		}()
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"request": "publish"}
	for k, v := range publish {
		body[k] = v
	}
	data, answer := mustRequest(t, p.h, body, janustest.CompleteLocal(t, pc, offer))
	if data["configured"] != "ok" || answer == nil {
		t.Fatalf("publish: %v", data)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("publisher not connected")
	}
	return p
}

// mjrs lists the .mjr files in dir (recursively), sorted.
func mjrs(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && filepath.Ext(path) == ".mjr" {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// A publisher publishing with record and filename for 10 s of real VP8 and Opus leaves one .mjr
// per stream, <filename>-<kind>-<mindex>.mjr in the room's rec_dir, that janus-pp-rec turns into a
// .webm and an .opus lasting 10 s (± 0.5 s) which ffmpeg decodes cleanly, and strata's converter
// into one .webm of both. With
// recording.playable the publisher is also alice.webm, both tracks in one file, as long.
func TestPublisherRecordingPlays(t *testing.T) {
	t.Parallel()
	m := rectest.Media(t)
	dir := t.TempDir()
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.VideoRoom.RecordingsDir = dir
		cfg.Recording.Playable = true
	})
	h := attach(t, c)
	mustRequest(t, h, map[string]any{"request": "create", "room": 7001, "rec_dir": "room7001"}, nil)
	p := publishAV(t, c, 7001, map[string]any{"record": true, "filename": "alice"})
	rectest.Send(m, p.audio, p.video, 10*time.Second)
	mustRequest(t, p.h, map[string]any{"request": "unpublish"}, nil)
	audio, video := filepath.Join(dir, "room7001", "alice-audio-0.mjr"), filepath.Join(dir, "room7001", "alice-video-1.mjr")
	if got := mjrs(t, dir); len(got) != 2 || got[0] != audio || got[1] != video {
		t.Fatalf("recordings %v, want %s and %s", got, audio, video)
	}
	out := t.TempDir()
	rectest.Converted(t, audio, filepath.Join(out, "alice.opus"), "opus", 10*time.Second)
	rectest.Converted(t, video, filepath.Join(out, "alice.webm"), "vp8", 10*time.Second)
	rectest.ConvertedByStrata(t, filepath.Join(out, "both.webm"), 10*time.Second, audio, video)
	t.Run("playable", func(t *testing.T) { rectest.Playable(t, filepath.Join(dir, "room7001", "alice.webm"), 10*time.Second) })
}

// enable_recording starts and stops the recording of the room's publishers as Janus does, named
// videoroom-<room>-user-<id>-<µs>-<kind>-<mindex>.mjr; lock_record keeps a publisher without the
// secret from changing it; paths outside the recordings directory are refused.
func TestEnableRecordingToggles(t *testing.T) {
	t.Parallel()
	m := rectest.Media(t)
	dir := t.TempDir()
	srv, c := janustest.Start(t, func(cfg *config.Config) { cfg.Plugins.VideoRoom.RecordingsDir = dir }, janustest.Logger())
	h := attach(t, c)
	_, _, err := request(t, h, map[string]any{"request": "create", "room": 7002, "rec_dir": "../elsewhere"}, nil)
	wantCode(t, err, 430)
	mustRequest(t, h, map[string]any{"request": "create", "room": 7002, "secret": "s3", "lock_record": true}, nil)
	p := publishAV(t, c, 7002, map[string]any{"record": true}) // locked: ignored without the secret
	_, _, err = request(t, p.h, map[string]any{"request": "configure", "filename": "/etc/x"}, nil)
	wantCode(t, err, 430)
	stop := make(chan time.Time)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		rectest.SendUntil(m, p.audio, p.video, stop)
	}()
	defer func() { close(stop); <-sent }()
	time.Sleep(time.Second)
	if got := mjrs(t, dir); len(got) != 0 {
		t.Fatalf("recording without record: %v", got)
	}
	_, _, err = request(t, h, map[string]any{"request": "enable_recording", "room": 7002, "secret": "wrong", "record": true}, nil)
	wantCode(t, err, 433)
	if data, _ := mustRequest(t, h, map[string]any{"request": "enable_recording", "room": 7002, "secret": "s3", "record": true}, nil); data["record"] != true {
		t.Fatalf("enable_recording: %v", data)
	}
	name := regexp.MustCompile(`/videoroom-7002-user-(\d+)-\d{16}-(audio-0|video-1)\.mjr$`)
	got := mjrs(t, dir)
	if len(got) != 2 || !name.MatchString(got[0]) || !name.MatchString(got[1]) {
		t.Fatalf("recordings %v", got)
	}
	growing := func() bool {
		before := sizes(t, got)
		time.Sleep(2500 * time.Millisecond) // the recordings are flushed every second
		after := sizes(t, got)
		return after[0] > before[0] && after[1] > before[1]
	}
	if !growing() {
		t.Fatal("the recordings do not grow")
	}
	// handle_info names each stream's recording, as Janus's does.
	for _, st := range pluginInfo(t, srv, p.session, p.h.ID)["streams"].([]any) {
		st := st.(map[string]any)
		if rec, _ := st["recording"].(string); rec == "" || !name.MatchString("/"+rec) {
			t.Fatalf("handle_info stream %v", st)
		}
	}
	mustRequest(t, h, map[string]any{"request": "enable_recording", "room": 7002, "secret": "s3", "record": false}, nil)
	if growing() {
		t.Fatal("the recordings grow after enable_recording false")
	}
	// A new recording has a new name; the first ones stay as they were.
	mustRequest(t, p.h, map[string]any{"request": "configure", "record": true, "secret": "s3"}, nil)
	if n := len(mjrs(t, dir)); n != 4 {
		t.Fatalf("%d recordings after configure record:true", n)
	}
	rows, _ := mustRequest(t, h, map[string]any{"request": "list"}, nil)
	for _, r := range rows["list"].([]any) {
		if r := r.(map[string]any); r["room"] == float64(7002) && (r["record"] != false || r["lock_record"] != true) {
			t.Fatalf("list: %v", r)
		}
	}
}

func sizes(t *testing.T, paths []string) []int64 {
	t.Helper()
	out := make([]int64, len(paths))
	for i, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = st.Size()
	}
	return out
}
