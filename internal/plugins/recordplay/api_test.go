package recordplay_test

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/recordplay"
	"github.com/strata-rtc/strata/internal/record"
)

// listed returns the list's entries by id, and the invalid files it reports.
func listed(t *testing.T, h *janusclient.Handle) (map[float64]map[string]any, []any) {
	t.Helper()
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "list"}, nil)
	out := map[float64]map[string]any{}
	list, _ := data["list"].([]any)
	for _, e := range list {
		m := e.(map[string]any)
		out[m["id"].(float64)] = m
	}
	bad, _ := data["invalid"].([]any)
	return out, bad
}

// Janus's sample recording (the oldest .mjr format) is listed and plays; pause holds it and
// resume lets it go on; stop ends it with Janus's events.
func TestPlayJanusSamplePauseResume(t *testing.T) {
	dir := t.TempDir()
	copySample(t, dir)
	c, h := startServer(t, dir)
	list, _ := listed(t, h)
	e := list[1234]
	if e == nil || e["name"] != "Lorenzo says hello!" || e["date"] != "2014-10-22 14:44:36" || e["audio_codec"] != "opus" ||
		e["video_codec"] != "vp8" || e["audio"] != true || e["video"] != true {
		t.Fatalf("list: %v", list)
	}
	v := newViewer(t, nil)
	p := janustest.Attach(t, c, recordplay.Package)
	play(t, p, v, 1234)
	waitFor(t, "media", func() bool { return v.audio.Load() > 25 && v.vids.Load() > 10 })
	data, _ := janustest.MustRequest(t, p, map[string]any{"request": "pause"}, nil)
	if r, _ := data["result"].(map[string]any); r["status"] != "paused" || r["id"] != float64(1234) {
		t.Fatalf("pause: %v", data)
	}
	time.Sleep(200 * time.Millisecond)
	held := v.audio.Load()
	time.Sleep(600 * time.Millisecond)
	if got := v.audio.Load(); got != held {
		t.Fatalf("%d audio packets arrived while paused", got-held)
	}
	data, _ = janustest.MustRequest(t, p, map[string]any{"request": "resume"}, nil)
	if r, _ := data["result"].(map[string]any); r["status"] != "resumed" {
		t.Fatalf("resume: %v", data)
	}
	waitFor(t, "media after resume", func() bool { return v.audio.Load() > held+25 })
	v.closeIVF() // the video so far, paused and resumed, decodes
	n := decodedFrames(t, v.ivf)
	t.Logf("Janus's sample: %d video frames decoded", n)
	if n < 10 {
		t.Errorf("decoded %d frames of Janus's sample", n)
	}
	// An ICE restart: strata offers again with new credentials, the viewer answers in start.
	data, offer := janustest.MustRequest(t, p, map[string]any{"request": "play", "id": 1234, "restart": true}, nil)
	if r, _ := data["result"].(map[string]any); r["status"] != "restarting" || offer == nil {
		t.Fatalf("restart: %v", data)
	}
	data, _ = janustest.MustRequest(t, p, map[string]any{"request": "start"}, v.answer(t, offer))
	if r, _ := data["result"].(map[string]any); r["status"] != "playing" {
		t.Fatalf("start after restart: %v", data)
	}
	before := v.audio.Load()
	waitFor(t, "media after the ICE restart", func() bool { return v.audio.Load() > before+25 })
	data, _ = janustest.MustRequest(t, p, map[string]any{"request": "stop"}, nil)
	if r, _ := data["result"].(map[string]any); r["status"] != "stopped" || r["id"] != float64(1234) {
		t.Fatalf("stop: %v", data)
	}
	janustest.WaitEvent(t, p, 5*time.Second, func(d map[string]any) bool { return d["result"] == "done" })
}

// recordedSpan is how long an Opus recording's timestamps say it lasts.
func recordedSpan(t *testing.T, path string) time.Duration {
	t.Helper()
	r, err := record.OpenMJR(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var first, last uint32
	for n := 0; ; n++ {
		f, err := r.Next()
		if err != nil {
			break
		}
		ts := binary.BigEndian.Uint32(f.RTP[4:])
		if n == 0 {
			first = ts
		}
		last = ts
	}
	return time.Duration(last-first) * time.Second / 48000
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s", what)
		}
	}
}

// Requests that cannot be served get Janus's codes.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	copySample(t, dir)
	_, h := startServer(t, dir)
	offer := newSender(t, nil).offer(t)
	cases := []struct {
		body map[string]any
		jsep *janusclient.JSEP
		code int
	}{
		{map[string]any{"request": "dance"}, nil, recordplay.ErrInvalidRequest},
		{map[string]any{"nothing": 1}, nil, recordplay.ErrMissingElement},
		{map[string]any{"request": 7}, nil, recordplay.ErrInvalidElement},
		{map[string]any{"request": "record", "name": "x"}, nil, recordplay.ErrMissingElement},
		{map[string]any{"request": "record"}, offer, recordplay.ErrMissingElement},
		{map[string]any{"request": "record", "name": ""}, offer, recordplay.ErrInvalidElement},
		{map[string]any{"request": "record", "name": "x", "id": -1}, offer, recordplay.ErrInvalidElement},
		{map[string]any{"request": "record", "name": "x", "id": 1234}, offer, recordplay.ErrRecordingExists},
		{map[string]any{"request": "record", "name": "x", "filename": "../escape"}, offer, recordplay.ErrInvalidElement},
		{map[string]any{"request": "record", "name": "x", "filename": "/tmp/abs"}, offer, recordplay.ErrInvalidElement},
		{map[string]any{"request": "play"}, nil, recordplay.ErrMissingElement},
		{map[string]any{"request": "play", "id": "1234"}, nil, recordplay.ErrInvalidElement},
		{map[string]any{"request": "play", "id": 99}, nil, recordplay.ErrNotFound},
		{map[string]any{"request": "play", "id": 1234}, offer, recordplay.ErrInvalidElement},
		{map[string]any{"request": "start"}, nil, recordplay.ErrInvalidState},
		{map[string]any{"request": "configure", "video-bitrate-max": -5}, nil, recordplay.ErrInvalidElement},
	}
	for _, c := range cases {
		if _, code := request(t, h, c.body, c.jsep); code != c.code {
			t.Errorf("%v: code %d, want %d", c.body, code, c.code)
		}
	}
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "configure", "video-bitrate-max": 500000}, nil)
	if s, _ := data["settings"].(map[string]any); data["recordplay"] != "configure" || s["video-bitrate-max"] != float64(500000) ||
		s["video-keyframe-interval"] != float64(15000) {
		t.Errorf("configure: %v", data)
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "pause"}, nil)
	if _, has := data["result"]; has || data["recordplay"] != "event" {
		t.Errorf("pause with nothing to pause: %v", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("refused requests left files: %d entries", len(entries))
	}
}

// A directory with broken entries: the good recordings list; a .nfo that cannot be read is
// reported with the reason; a recording whose file is not a recording, or lies outside the
// directory, is listed with the error and does not play (417); with one good file it plays that
// one with Janus's warning. update picks up what changed.
func TestBrokenEntries(t *testing.T) {
	dir := t.TempDir()
	copySample(t, dir)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("garbage.nfo", "\x00\x01 not a .nfo at all")
	write("noname.nfo", "[5]\ndate = d\naudio = rec-sample-audio.mjr\n")
	write("dup.nfo", "[1234]\nname = again\ndate = d\naudio = rec-sample-audio.mjr\n")
	write("text.mjr", "this is not a recording")
	write("6.nfo", "[6]\nname = broken\ndate = d\naudio = text.mjr\n")
	write("7.nfo", "[7]\nname = outside\ndate = d\naudio = ../../../etc/passwd\n")
	write("8.nfo", "[8]\nname = half\ndate = d\naudio = text.mjr\nvideo = rec-sample-video\n")
	c, h := startServer(t, dir)
	list, bad := listed(t, h)
	if list[1234] == nil || len(list) != 4 {
		t.Fatalf("listed %v", list)
	}
	if !strings.Contains(list[6]["audio_error"].(string), "not a recording") || list[6]["audio_codec"] != nil {
		t.Errorf("broken file: %v", list[6])
	}
	if !strings.Contains(list[7]["audio_error"].(string), "not a file name in the recordings directory") {
		t.Errorf("file outside: %v", list[7])
	}
	reasons := map[string]string{}
	for _, b := range bad {
		m := b.(map[string]any)
		reasons[m["file"].(string)] = m["error"].(string)
	}
	if len(reasons) != 3 || !strings.Contains(reasons["noname.nfo"], "no name") || reasons["garbage.nfo"] == "" {
		t.Errorf("invalid: %v", reasons)
	}
	if !strings.Contains(reasons["dup.nfo"], "another .nfo") && !strings.Contains(reasons["1234.nfo"], "another .nfo") {
		t.Errorf("duplicate id not reported: %v", reasons)
	}
	for _, id := range []int{6, 7} {
		if _, code := request(t, h, map[string]any{"request": "play", "id": id}, nil); code != recordplay.ErrInvalidRecording {
			t.Errorf("play %d: code %d, want 417", id, code)
		}
	}
	p := janustest.Attach(t, c, recordplay.Package)
	data, _ := janustest.MustRequest(t, p, map[string]any{"request": "play", "id": 8}, nil)
	if r, _ := data["result"].(map[string]any); r["warning"] != "Broken audio file, playing video only" {
		t.Errorf("half-broken: %v", data)
	}

	_ = os.Remove(filepath.Join(dir, "6.nfo"))
	write("9.nfo", "[9]\nname = new\ndate = d\nvideo = rec-sample-video.mjr\n")
	if list, _ := listed(t, h); list[9] != nil || list[6] == nil {
		t.Error("the list changed before update")
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "update"}, nil)
	if data["recordplay"] != "ok" {
		t.Errorf("update: %v", data)
	}
	if list, _ := listed(t, h); list[9] == nil || list[6] != nil || list[9]["audio"] != false {
		t.Errorf("after update: %v", list)
	}
}

// A record request's filename names the files; the .nfo says so and the recording plays. With
// recording.playable the recording also has its playable file, both tracks in it.
func TestRecordWithFilename(t *testing.T) {
	dir := t.TempDir()
	c, h := startServer(t, dir, func(cfg *config.Config) { cfg.Recording.Playable = true })
	s := newSender(t, nil)
	data, j := janustest.MustRequest(t, h, map[string]any{"request": "record", "name": "named", "filename": "talk"}, s.offer(t))
	r, _ := data["result"].(map[string]any)
	id, _ := r["id"].(float64)
	if id <= 0 || id > 1<<53 {
		t.Fatalf("record: %v", data)
	}
	s.answer(t, j)
	// Another handle cannot record into the same files meanwhile.
	other := janustest.Attach(t, c, recordplay.Package)
	if _, code := request(t, other, map[string]any{"request": "record", "name": "clash", "filename": "talk"}, newSender(t, nil).offer(t)); code != recordplay.ErrInvalidState {
		t.Errorf("a second recording into talk-*.mjr: code %d, want 418", code)
	}
	s.send(t, time.Second)
	// A pause is left out of the recording, as Janus's recorder leaves it out.
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "pause"}, nil)
	if r, _ := data["result"].(map[string]any); r["status"] != "paused" || r["id"] != id {
		t.Fatalf("pause: %v", data)
	}
	s.send(t, 1500*time.Millisecond)
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "resume"}, nil)
	if r, _ := data["result"].(map[string]any); r["status"] != "resumed" {
		t.Fatalf("resume: %v", data)
	}
	s.send(t, 500*time.Millisecond)
	// A new offer while recording (an ICE restart) is answered and the recording goes on.
	o, err := s.pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
	if err != nil {
		t.Fatal(err)
	}
	data, j = janustest.MustRequest(t, h, map[string]any{"request": "record", "name": "named"}, janustest.CompleteLocal(t, s.pc, o))
	if r, _ := data["result"].(map[string]any); r["status"] != "recording" || r["id"] != id {
		t.Fatalf("update: %v", data)
	}
	s.answer(t, j)
	s.send(t, 500*time.Millisecond)
	janustest.MustRequest(t, h, map[string]any{"request": "stop"}, nil)
	janustest.WaitEvent(t, h, 5*time.Second, func(d map[string]any) bool { return d["result"] == "done" })
	for _, f := range []string{"talk-audio.mjr", "talk-video.mjr"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", filepath.Join(dir, "talk.webm")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "vp8") || !strings.Contains(string(out), "opus") {
		t.Errorf("the playable file: %v\n%s", err, out)
	}
	if span := recordedSpan(t, filepath.Join(dir, "talk-audio.mjr")); span < 1200*time.Millisecond || span > 2500*time.Millisecond {
		t.Errorf("the recording's timestamps span %v: up to 2 s recorded around a 1.5 s pause", span)
	}
	v := newViewer(t, nil)
	play(t, janustest.Attach(t, c, recordplay.Package), v, uint64(id))
	waitFor(t, "media", func() bool { return v.audio.Load() > 10 && v.vids.Load() > 10 })
}
