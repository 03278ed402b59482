package mjrplay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-rtc/strata/internal/sfu"
)

// FuzzPlay: whatever a file holds, Open refuses it or its packets play (driven here without
// waiting for their moments) to the end of the file without a panic.
func FuzzPlay(f *testing.F) {
	dir := f.TempDir()
	for _, p := range []string{
		writeMJR(f, dir, "a.mjr", "a", "opus", 1, audioPkts(5, 65533, 4294967000, 5)),
		writeMJR(f, dir, "v.mjr", "v", "vp8", 1, videoPkts(3, 1, 0, 6)),
		janusSample + "audio.mjr",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4000)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.mjr")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open([]string{path}, sfu.ReceiverConfig{})
		if err != nil {
			return
		}
		defer s.Close()
		tr := s.play[0]
		for i := 0; tr.pending && i < 100000; i++ {
			tr.send(sfu.Now())
			s.skipped.Add(tr.advance())
		}
		if tr.pending {
			t.Fatal("the file never ended")
		}
	})
}
