package file

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"testing"

	"github.com/strata-rtc/strata/internal/media"
)

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

// fixOggCRC rewrites the checksum of every whole page it finds, so that mutated input reaches
// the parser behind the checksum.
func fixOggCRC(b []byte) {
	for off := 0; off+oggHeaderLen <= len(b); {
		if string(b[off:off+4]) != "OggS" {
			off++
			continue
		}
		segs := int(b[off+26])
		end := off + oggHeaderLen + segs
		if end > len(b) {
			return
		}
		for _, l := range b[off+oggHeaderLen : end] {
			end += int(l)
		}
		if end > len(b) {
			return
		}
		binary.LittleEndian.PutUint32(b[off+22:], 0)
		binary.LittleEndian.PutUint32(b[off+22:], oggCRC(0, b[off:end]))
		off = end
	}
}

// playAll plays a demuxer's file without pacing and checks what it emits.
func playAll(t *testing.T, d demuxer) {
	n := len(d.tracks())
	for pass := 0; pass < 2; pass++ { // a second pass as a loop plays it
		_ = d.play(func(f *frame) bool {
			if f.track < 0 || f.track >= n || f.dur < 0 {
				t.Fatalf("frame %+v of %d tracks", f, n)
			}
			return true
		})
	}
}

func FuzzOggOpus(f *testing.F) {
	seed, err := os.ReadFile("testdata/short.opus")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:100])
	two := append(append([]byte(nil), seed...), seed...) // a chained stream
	f.Add(two)
	f.Fuzz(func(t *testing.T, data []byte) {
		data = append([]byte(nil), data...)
		fixOggCRC(data)
		d, err := newOggOpus(nopCloser{bytes.NewReader(data)})
		if err != nil {
			return
		}
		var prev int64 = -1
		_ = d.play(func(f *frame) bool {
			if f.ts < prev || media.OpusSamples(f.data) == 0 || f.ts > 1<<40 {
				t.Fatalf("frame at %d after %d, %d bytes", f.ts, prev, len(f.data))
			}
			prev = f.ts
			return true
		})
		playAll(t, d)
	})
}

func FuzzRawG711(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0xd5, 0x55}, 200))
	f.Add([]byte("OggS and some text that is long enough to be one frame of G.711 audio, which is one hundred and sixty bytes long......................................."))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := newRawG711(nopCloser{bytes.NewReader(data)}, int64(len(data)), media.CodecPCMA)
		if err != nil {
			return
		}
		frames := 0
		_ = d.play(func(f *frame) bool {
			if len(f.data) != g711Frame || f.ts != int64(frames)*g711Frame {
				t.Fatalf("frame %d: %d bytes at %d", frames, len(f.data), f.ts)
			}
			frames++
			return true
		})
		if frames != len(data)/g711Frame {
			t.Fatalf("%d frames from %d bytes", frames, len(data))
		}
	})
}

func FuzzMatroska(f *testing.F) {
	seed, err := os.ReadFile("testdata/short.webm")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := newWebM(nopCloser{bytes.NewReader(data)})
		if err != nil {
			return
		}
		playAll(t, d)
	})
}
