package audiobridge_test

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/config"
)

// run runs a real tool (ffmpeg) and returns its standard output.
func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

// TestPlayFile: an Ogg/Opus announcement made by ffmpeg is heard by every participant, with
// announcement-started and -stopped events; is_playing follows it, stop_file ends a looping one;
// a file that is not Ogg/Opus is 499 and a path out of files_dir 484.
func TestPlayFile(t *testing.T) {
	files := t.TempDir()
	c := startServer(t, func(cfg *config.Config) { cfg.Plugins.AudioBridge.FilesDir = files })
	admin := attach(t, c)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 8, "secret": "s"}, nil)
	run(t, "ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=700:sample_rate=48000", "-t", "1", "-c:a", "libopus", filepath.Join(files, "tone.opus"))
	if err := os.WriteFile(filepath.Join(files, "text.opus"), []byte("not an ogg file"), 0o644); err != nil {
		t.Fatal(err)
	}
	listener := joinTalker(t, c, 8, 0, 1, nil)

	_, _, err := request(t, admin, map[string]any{"request": "play_file", "room": 8, "secret": "s", "filename": "text.opus"}, nil)
	wantCode(t, err, 499)
	_, _, err = request(t, admin, map[string]any{"request": "play_file", "room": 8, "secret": "s", "filename": "/etc/passwd"}, nil)
	wantCode(t, err, 484)
	data, _ := mustRequest(t, admin, map[string]any{"request": "play_file", "room": 8, "secret": "s", "filename": "tone.opus", "file_id": "a", "loop": true}, nil)
	if data["file_id"] != "a" {
		t.Fatalf("play_file: %v", data)
	}
	_, _, err = request(t, admin, map[string]any{"request": "play_file", "room": 8, "secret": "s", "filename": "tone.opus", "file_id": "a"}, nil)
	wantCode(t, err, 490)
	waitEvent(t, listener.h, 5*time.Second, func(d map[string]any) bool { return d["audiobridge"] == "announcement-started" && d["file_id"] == "a" })
	time.Sleep(300 * time.Millisecond)
	if got := listener.toneIn(listener.recent(600*time.Millisecond), 0, 700); got < 0.05 {
		t.Errorf("the announcement is heard at %.3f", got)
	}
	if d, _ := mustRequest(t, admin, map[string]any{"request": "is_playing", "room": 8, "secret": "s", "file_id": "a"}, nil); d["playing"] != true {
		t.Fatalf("is_playing while looping: %v", d)
	}
	mustRequest(t, admin, map[string]any{"request": "stop_file", "room": 8, "secret": "s", "file_id": "a"}, nil)
	waitEvent(t, listener.h, 5*time.Second, func(d map[string]any) bool { return d["audiobridge"] == "announcement-stopped" && d["file_id"] == "a" })
	if d, _ := mustRequest(t, admin, map[string]any{"request": "is_playing", "room": 8, "secret": "s", "file_id": "a"}, nil); d["playing"] != false {
		t.Fatalf("is_playing after stop_file: %v", d)
	}
	// Without loop a file ends by itself.
	mustRequest(t, admin, map[string]any{"request": "play_file", "room": 8, "secret": "s", "filename": "tone.opus", "file_id": "b"}, nil)
	waitEvent(t, listener.h, 5*time.Second, func(d map[string]any) bool { return d["audiobridge"] == "announcement-stopped" && d["file_id"] == "b" })
}

// TestRecordingTheMix: enable_recording writes the room's mix to a WAV file in recordings_dir
// that ffmpeg decodes into the participants' tones; a record_dir out of it is 484.
func TestRecordingTheMix(t *testing.T) {
	rec := t.TempDir()
	c := startServer(t, func(cfg *config.Config) { cfg.Plugins.AudioBridge.RecordingsDir = rec })
	admin := attach(t, c)
	_, _, err := request(t, admin, map[string]any{"request": "create", "room": 9, "record": true, "record_dir": "/tmp"}, nil)
	wantCode(t, err, 484)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 9, "secret": "s"}, nil)
	joinTalker(t, c, 9, tones[0], 1, nil)
	joinTalker(t, c, 9, tones[2], 1, nil)
	time.Sleep(500 * time.Millisecond)
	d, _ := mustRequest(t, admin, map[string]any{"request": "enable_recording", "room": 9, "secret": "s", "record": true, "record_file": "mix.wav"}, nil)
	if d["record"] != true {
		t.Fatalf("enable_recording: %v", d)
	}
	time.Sleep(time.Second)
	mustRequest(t, admin, map[string]any{"request": "enable_recording", "room": 9, "secret": "s", "record": false}, nil)
	raw := run(t, "ffmpeg", "-loglevel", "error", "-i", filepath.Join(rec, "mix.wav"), "-f", "s16le", "-acodec", "pcm_s16le", "-")
	pcm := make([]int16, len(raw)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	if len(pcm) < 12000 {
		t.Fatalf("the recording holds %d samples, want about a second at 16 kHz", len(pcm))
	}
	for _, hz := range []float64{tones[0], tones[2]} {
		if got := audio.ToneLevel(pcm[len(pcm)/4:], 1, 0, 16000, hz); got < 0.08 {
			t.Errorf("the recording holds %v Hz at %.3f", hz, got)
		}
	}
}

// TestParticipantRecordings: join's record and filename record the participant's own audio to
// <filename>-audio.mjr, which Janus's janus-pp-rec turns into an Opus file holding its tone;
// enable_mjrs records everyone in the room's mjrs_dir.
func TestParticipantRecordings(t *testing.T) {
	rec := t.TempDir()
	c := startServer(t, func(cfg *config.Config) { cfg.Plugins.AudioBridge.RecordingsDir = rec })
	admin := attach(t, c)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 10, "secret": "s"}, nil)
	alice := joinTalker(t, c, 10, tones[0], 1, map[string]any{"record": true, "filename": "alice"})
	joinTalker(t, c, 10, tones[2], 1, nil)
	d, _ := mustRequest(t, admin, map[string]any{"request": "enable_mjrs", "room": 10, "secret": "s", "mjrs": true, "mjrs_dir": "room10"}, nil)
	if d["mjrs"] != true {
		t.Fatalf("enable_mjrs: %v", d)
	}
	time.Sleep(1500 * time.Millisecond)
	mustRequest(t, alice.h, map[string]any{"request": "leave"}, nil)
	mustRequest(t, admin, map[string]any{"request": "enable_mjrs", "room": 10, "secret": "s", "mjrs": false}, nil)

	decode := func(mjr string) []int16 {
		out := filepath.Join(t.TempDir(), "out.opus")
		run(t, "janus-pp-rec", mjr, out)
		raw := run(t, "ffmpeg", "-loglevel", "error", "-i", out, "-ar", "48000", "-ac", "1", "-f", "s16le", "-acodec", "pcm_s16le", "-")
		pcm := make([]int16, len(raw)/2)
		for i := range pcm {
			pcm[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		return pcm
	}
	pcm := decode(filepath.Join(rec, "alice-audio.mjr"))
	if len(pcm) < 48000 || audio.ToneLevel(pcm, 1, 0, 48000, tones[0]) < 0.1 || audio.ToneLevel(pcm, 1, 0, 48000, tones[2]) > 0.01 {
		t.Errorf("alice's recording: %d samples, her tone %.3f, bob's %.3f", len(pcm),
			audio.ToneLevel(pcm, 1, 0, 48000, tones[0]), audio.ToneLevel(pcm, 1, 0, 48000, tones[2]))
	}
	bobs, _ := filepath.Glob(filepath.Join(rec, "room10", "janus-audioroom-10-user-*-audio.mjr"))
	if len(bobs) != 1 {
		t.Fatalf("recordings in mjrs_dir: %v, want bob's", bobs)
	}
	if pcm := decode(bobs[0]); audio.ToneLevel(pcm, 1, 0, 48000, tones[2]) < 0.1 {
		t.Errorf("bob's recording holds his tone at %.3f", audio.ToneLevel(pcm, 1, 0, 48000, tones[2]))
	}
}

// TestParticipantRecordingPlayable: with recording.playable a participant's recording is also an
// Ogg/Opus file beside the .mjr, playable as it is, holding the participant's own voice.
func TestParticipantRecordingPlayable(t *testing.T) {
	rec := t.TempDir()
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.AudioBridge.RecordingsDir = rec
		cfg.Recording.Playable = true
	})
	admin := attach(t, c)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 11, "secret": "s"}, nil)
	alice := joinTalker(t, c, 11, tones[0], 1, map[string]any{"record": true, "filename": "alice"})
	joinTalker(t, c, 11, tones[2], 1, nil)
	time.Sleep(1500 * time.Millisecond)
	mustRequest(t, alice.h, map[string]any{"request": "leave"}, nil)

	opus := filepath.Join(rec, "alice.opus")
	deadline := time.Now().Add(5 * time.Second)
	for _, err := os.Stat(opus); err != nil && time.Now().Before(deadline); _, err = os.Stat(opus) {
		time.Sleep(50 * time.Millisecond)
	}
	raw := run(t, "ffmpeg", "-v", "error", "-i", opus, "-ar", "48000", "-ac", "1", "-f", "s16le", "-acodec", "pcm_s16le", "-")
	pcm := make([]int16, len(raw)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	if len(pcm) < 48000 || audio.ToneLevel(pcm, 1, 0, 48000, tones[0]) < 0.1 {
		t.Errorf("alice.opus: %d samples, her tone at %.3f", len(pcm), audio.ToneLevel(pcm, 1, 0, 48000, tones[0]))
	}
	if _, err := os.Stat(filepath.Join(rec, "alice-audio.mjr")); err != nil {
		t.Errorf("the .mjr beside the playable file: %v", err)
	}
}
