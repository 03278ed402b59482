package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotWhatTheExtensionSays: a file whose content does not match its extension, or that holds
// nothing playable, is an error at Open that names the file and the reason.
func TestNotWhatTheExtensionSays(t *testing.T) {
	text := []byte(strings.Repeat("this is not audio at all\n", 20))
	opus := ffmpeg(t, "a.opus", "-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "libopus")
	opusBytes, err := os.ReadFile(opus)
	if err != nil {
		t.Fatal(err)
	}
	flacOgg := ffmpeg(t, "flac.ogg", "-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "flac")
	headersOnly := headerPages(t, opusBytes)
	// 100 ms pages: the last page is not the one Open reads.
	long := ffmpeg(t, "long.opus", "-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "libopus",
		"-page_duration", "100000")
	corrupt, err := os.ReadFile(long)
	if err != nil {
		t.Fatal(err)
	}
	corrupt[len(corrupt)-10] ^= 0xff // the last page's checksum no longer matches

	for _, c := range []struct {
		name string
		path string
		want string
	}{
		{"text named .opus", writeFile(t, "x.opus", text), "not an Ogg/Opus file"},
		{"text named .alaw", writeFile(t, "x.alaw", text), "not a raw pcma file: it is text"},
		{"Ogg named .mulaw", writeFile(t, "x.mulaw", opusBytes), "not a raw pcmu file: it is an Ogg file"},
		{"FLAC in Ogg named .ogg", flacOgg, "no Opus stream"},
		{"headers only", writeFile(t, "h.opus", headersOnly), "no audio after the Opus headers"},
		{"truncated", writeFile(t, "t.opus", opusBytes[:60]), "truncated Ogg page"},
		{"empty .alaw", writeFile(t, "e.alaw", nil), "shorter than one 20 ms frame"},
		{"empty .opus", writeFile(t, "e.opus", nil), "not an Ogg/Opus file"},
		{"unknown extension", writeFile(t, "x.mp3", text), `unsupported file type ".mp3"`},
		{"missing", filepath.Join(t.TempDir(), "missing.opus"), "no such file"},
		{"directory", t.TempDir() + "/", "not a regular file"},
	} {
		_, err := Open(c.path, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", c.name, err, c.want)
		}
	}

	// A corrupt page later in the file is found when it is played: playback stops, Err says why.
	s, err := Open(writeFile(t, "c.opus", corrupt), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Start()
	<-s.Done()
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("playing a file with a corrupt page: %v, want a checksum error", err)
	}
}

// headerPages returns the first two pages of an Ogg file (OpusHead, OpusTags).
func headerPages(t *testing.T, b []byte) []byte {
	t.Helper()
	off := 0
	for range 2 {
		segs := int(b[off+26])
		size := 27 + segs
		for _, l := range b[off+27 : off+27+segs] {
			size += int(l)
		}
		off += size
	}
	return b[:off]
}
