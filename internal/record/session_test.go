package record

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// vp8Key is a one-packet VP8 keyframe of 64x48 (payload descriptor, then the frame's start).
var vp8Key = []byte{0x10, 0x00, 0x00, 0x00, 0x9d, 0x01, 0x2a, 64, 0, 48, 0, 0xaa}

// sendAV writes n 20 ms audio packets and n video packets (a keyframe every 25th) to the tracks,
// from two goroutines, as two receivers' layers would.
func sendAV(t *testing.T, a, v sfu.Sink, n int) {
	t.Helper()
	var wg sync.WaitGroup
	base := sfu.Now()
	wg.Add(2)
	go func() {
		defer wg.Done()
		s := &stream{pt: 111, ssrc: 1, step: 960}
		for i := 0; i < n; i++ {
			a.WriteRTP(packetOf(t, s.packet(t, []byte{0xf8, 0xff, 0xfe}, false), base+time.Duration(i)*20*time.Millisecond))
		}
	}()
	go func() {
		defer wg.Done()
		s := &stream{pt: 96, ssrc: 2, step: 1800}
		for i := 0; i < n; i++ {
			payload := []byte{0x10, 0x01, 0x00, 0x00, 0xbb}
			if i%25 == 0 {
				payload = vp8Key
			}
			v.WriteRTP(packetOf(t, s.packet(t, payload, true), base+time.Duration(i)*20*time.Millisecond))
		}
	}()
	wg.Wait()
}

// With the switch on, a participant's two tracks give two .mjr files and one .webm holding both;
// an audio codec WebM cannot hold is left out of it (and recorded in its .mjr).
func TestSessionWritesMJRAndPlayable(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSession(dir, "user-1", SessionOptions{Playable: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.AddTrack(media.CodecOpus, "stereo=1", WithSlots(512))
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.AddTrack(media.CodecVP8, "", WithSlots(512))
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.AddTrack(media.CodecPCMU, "")
	if err != nil {
		t.Fatal(err)
	}
	sendAV(t, a, v, 250)
	s.Close()
	if err := s.Close(); err != nil { // a second Close says the same
		t.Fatal(err)
	}
	st := s.Stats()
	t.Logf("%+v", st)
	for _, name := range []string{"user-1-audio.mjr", "user-1-video.mjr", "user-1-audio-2.mjr", "user-1.webm"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if g.MJR().Path() != filepath.Join(dir, "user-1-audio-2.mjr") || st.Path != filepath.Join(dir, "user-1.webm") {
		t.Fatalf("paths %s, %s", g.MJR().Path(), st.Path)
	}
	p := st.Playable
	if len(p.Tracks) != 2 || p.Tracks[0].Frames != 250 || p.Tracks[1].Frames != 250 || st.Dropped != 0 {
		t.Fatalf("playable %+v", p)
	}
	if st.MJR[0].Packets != 250 || st.MJR[1].Packets != 250 {
		t.Fatalf("mjr %+v", st.MJR)
	}
	if _, err := s.AddTrack(media.CodecOpus, ""); err == nil {
		t.Fatal("a closed session took a track")
	}
}

// Without the switch, only the .mjr files are written.
func TestSessionWithoutPlayable(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSession(dir, "echotest", SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.AddTrack(media.CodecOpus, "")
	v, _ := s.AddTrack(media.CodecVP8, "")
	sendAV(t, a, v, 50)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 2 || s.Stats().Path != "" {
		t.Fatalf("files %v", files)
	}
	if _, err := NewSession(filepath.Join(dir, "missing"), "x", SessionOptions{}); err == nil {
		t.Fatal("a session in a missing directory")
	}
	if _, err := NewSession(dir, "x", SessionOptions{Playable: true, Formats: map[string]string{"vp8": "avi"}}); err == nil {
		t.Fatal("a session with an unknown format")
	}
}

// A ring too small for what arrives at once drops and counts: every packet is either in the
// playable file's counts or in Dropped, and the media path never waited.
func TestSessionDropsAndCounts(t *testing.T) {
	if _, err := NewSession(t.TempDir(), "small", SessionOptions{Playable: true, Formats: map[string]string{"vp8": "mp4"}}); err == nil {
		t.Fatal("VP8 into MP4 accepted")
	}
	s, err := NewSession(t.TempDir(), "small", SessionOptions{Playable: true})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.AddTrack(media.CodecOpus, "", WithSlots(4))
	v, _ := s.AddTrack(media.CodecVP8, "", WithSlots(4))
	sendAV(t, a, v, 2000)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	got := uint64(st.Playable.Tracks[0].Packets+st.Playable.Tracks[1].Packets) + st.Dropped
	if got != 4000 {
		t.Fatalf("%d packets written + dropped, 4000 sent: %+v", got, st)
	}
	t.Logf("dropped %d of 4000", st.Dropped)
}

// A playable file on a full disk stops (Close says why); the .mjr files are written all the same.
func TestSessionFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/dev/full", filepath.Join(dir, "full.webm")); err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(dir, "full", SessionOptions{Playable: true})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.AddTrack(media.CodecOpus, "", WithSlots(512))
	v, _ := s.AddTrack(media.CodecVP8, "", WithSlots(512))
	sendAV(t, a, v, 250)
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("Close said %v", err)
	}
	if st := s.Stats(); st.MJR[0].Packets != 250 || st.MJR[1].Packets != 250 {
		t.Fatalf("mjr %+v", st.MJR)
	}
}

// The media path's side of a session track copies and returns: nothing allocated per packet.
func TestSessionTrackAllocatesNothing(t *testing.T) {
	s, err := NewSession(t.TempDir(), "alloc", SessionOptions{Playable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, _ := s.AddTrack(media.CodecOpus, "")
	st := &stream{pt: 111, ssrc: 1, step: 960}
	p := packetOf(t, st.packet(t, []byte{0xf8, 0xff, 0xfe}, false), sfu.Now())
	if n := testing.AllocsPerRun(1000, func() { a.WriteRTP(p) }); n != 0 {
		t.Fatalf("%.1f allocations per packet", n)
	}
}
