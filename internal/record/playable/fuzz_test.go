package playable

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

// FuzzWriter feeds arbitrary packets of each codec to a Writer of each format that holds it:
// never a panic, and no more frames than packets and silence.
func FuzzWriter(f *testing.F) {
	f.Add(uint8(0), packet(1, 0, 1, true, vp8Frame(true)), packet(2, 3000, 1, true, vp8Frame(false)))
	f.Add(uint8(1), packet(1, 0, 1, true, []byte{0x8c, 0x01, 0x82, 0x49, 0x83, 0x42, 0x00}), packet(2, 3000, 1, false, []byte{0x84, 0x02}))
	f.Add(uint8(2), packet(1, 0, 1, true, []byte{0x18, 0x00, 0x04, 0x67, 0x42, 0xc0, 0x1e, 0x00, 0x02, 0x68, 0xce}), packet(2, 0, 1, true, []byte{0x7c, 0x85, 0x88}))
	f.Add(uint8(3), packet(1, 0, 1, true, []byte{0x18, 0x0a, 0x0b, 0x00, 0x00, 0x00, 0x04, 0x3c, 0xff, 0xbc}), packet(2, 9, 1, true, []byte{0x10, 0x32, 0x01, 0x00}))
	f.Add(uint8(4), packet(1, 0, 1, false, []byte{0xf8, 0xff, 0xfe}), packet(9, 960*9, 1, false, []byte{0xfb, 0x03, 0x00}))
	codecs := []media.Codec{media.CodecVP8, media.CodecVP9, media.CodecH264, media.CodecAV1, media.CodecOpus}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, which uint8, a, b []byte) {
		c := codecs[int(which)%len(codecs)]
		for _, ext := range []string{".webm", ".mp4", ".opus"} {
			w, err := New(filepath.Join(dir, "f"+ext), Track{Codec: media.CodecOpus}, Track{Codec: c})
			if err != nil {
				continue
			}
			for i, p := range [][]byte{a, b, a, b} {
				w.Packet(i%2, p, time.Duration(i)*10*time.Millisecond)
				w.Packet(1, p, time.Duration(i)*10*time.Millisecond)
			}
			st, _ := w.Close()
			for _, tr := range st.Tracks {
				if tr.Frames > tr.Packets+tr.Silence {
					t.Fatalf("stats %+v", st)
				}
			}
		}
	})
}

// FuzzOBU reads arbitrary bytes as an AV1 low-overhead bitstream and as a keyframe.
func FuzzOBU(f *testing.F) {
	f.Add([]byte{0x12, 0x00, 0x0a, 0x0b, 0x00, 0x00, 0x00, 0x04, 0x3c, 0xff, 0xbc, 0xda, 0xf9, 0x00, 0x40})
	f.Add([]byte{0x36, 0x10, 0x02, 0xaa, 0xbb})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := appendOBUs(nil, b, func(byte) bool { return true })
		if err == nil && string(out) != string(b) {
			t.Fatalf("kept everything, changed it: % x -> % x", b, out)
		}
		var v videoParams
		for _, c := range []media.Codec{media.CodecAV1, media.CodecVP8, media.CodecVP9, media.CodecH264} {
			v.keyframe(c, b)
		}
	})
}
