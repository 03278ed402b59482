package audio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oggPage builds an Ogg page header (RFC 3533 §6, CRC left zero) around one packet.
func oggPage(headerType byte, packet []byte) []byte {
	p := []byte("OggS\x00")
	p = append(p, headerType)
	p = append(p, make([]byte, 20)...) // granule, serial, sequence, CRC
	var lacing []byte
	n := len(packet)
	for ; n >= 255; n -= 255 {
		lacing = append(lacing, 255)
	}
	lacing = append(lacing, byte(n))
	p = append(p, byte(len(lacing)))
	p = append(p, lacing...)
	return append(p, packet...)
}

// FuzzOpenFile opens arbitrary bytes as an announcement: OpenFile refuses them with an error
// naming the file, or plays them to their end (or a while, looping) without panicking or hanging,
// every frame in the room's format; Close always returns.
func FuzzOpenFile(f *testing.F) {
	tiny, err := os.ReadFile("testdata/tone-100ms.opus") // 100 ms of 440 Hz, made with ffmpeg
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tiny)
	for _, n := range []int{27, 47, 60, 137, 200, len(tiny) - 1} {
		f.Add(tiny[:n])
	}
	head := []byte("OpusHead\x01\x02\x38\x01\x80\xbb\x00\x00\x00\x00\x00")
	f.Add(oggPage(2, head))
	f.Add(append(oggPage(2, head), oggPage(0, []byte("OpusTags\x00\x00\x00\x00\x00\x00\x00\x00"))...))
	f.Add(oggPage(2, []byte("OpusHead\x01\x00\x38\x01\x80\xbb\x00\x00\x00\x00\x00"))) // zero channels
	f.Add(oggPage(2, []byte("\x80theora")))
	f.Add([]byte("OggS"))
	f.Add([]byte("RIFF\x24\x00\x00\x00WAVEfmt "))
	f.Add([]byte("not an announcement\n"))
	f.Add([]byte{})
	room := Format{Rate: 16000, Channels: 1}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.opus")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, loop := range []bool{false, true} {
			s, err := OpenFile(path, room, loop)
			if err != nil {
				if !strings.Contains(err.Error(), path) {
					t.Fatalf("error without the path: %v", err)
				}
				return
			}
			deadline := time.Now().Add(5 * time.Second)
			frames := 0
			for !s.Done() && frames < 100 {
				if time.Now().After(deadline) {
					t.Fatalf("stuck after %d frames (loop %v)", frames, loop)
				}
				pcm, ok := s.Next()
				if !ok {
					time.Sleep(100 * time.Microsecond)
					continue
				}
				if len(pcm) != room.FrameLen() {
					t.Fatalf("a frame of %d values", len(pcm))
				}
				frames++
			}
			s.Close()
		}
	})
}
