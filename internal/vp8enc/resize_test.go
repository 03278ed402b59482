package vp8enc

import (
	"testing"

	"github.com/strata-rtc/strata/internal/videogen"
)

// After Resize the encoder takes frames of the new size, its next frame is a keyframe, and a
// receiver's decoder that saw the old stream decodes the new one at the new size.
func TestResize(t *testing.T) {
	enc := mustNew(t, 640, 360, testFPS, 600e3)
	dec := mustDecoder(t)
	big, _ := videogen.NewNoise(640, 360, 5, 0)
	small, _ := videogen.NewNoise(480, 270, 5, 0)
	pts := int64(0)
	encode := func(gen *videogen.Noise, n, w, h int) (keys int) {
		for i := range n {
			data, key, err := enc.Encode(gen.Next(), pts)
			pts += 3000
			if err != nil {
				t.Fatal(err)
			}
			if data == nil {
				continue
			}
			checkFrame(t, data, key, w, h)
			if key {
				keys++
				if i != 0 {
					t.Errorf("%dx%d: keyframe at frame %d", w, h, i)
				}
			}
			if dw, dh, err := dec.decode(data); err != nil || dw != w || dh != h {
				t.Fatalf("%dx%d frame %d decoded to %dx%d (%v)", w, h, i, dw, dh, err)
			}
		}
		return keys
	}
	if k := encode(big, 10, 640, 360); k != 1 {
		t.Fatalf("%d keyframes at 640x360", k)
	}
	if err := enc.Resize(480, 270); err != nil {
		t.Fatal(err)
	}
	if w, h := enc.Size(); w != 480 || h != 270 {
		t.Fatalf("size %dx%d after Resize", w, h)
	}
	if _, _, err := enc.Encode(big.Next(), pts); err == nil {
		t.Fatal("a 640x360 frame encoded after Resize(480, 270)")
	}
	if k := encode(small, 10, 480, 270); k != 1 {
		t.Fatalf("%d keyframes after Resize", k)
	}
	if err := enc.Resize(481, 270); err == nil {
		t.Fatal("odd width accepted")
	}
	if w, h := enc.Size(); w != 480 || h != 270 {
		t.Fatalf("a refused Resize changed the size to %dx%d", w, h)
	}
}

// LastQP is on VP8's 0–127 scale and follows the rate: noise at a starved rate takes a high
// quantiser, at a generous one a low one.
func TestLastQP(t *testing.T) {
	qp := func(bps float64) int {
		enc := mustNew(t, 320, 180, testFPS, bps)
		if q := enc.LastQP(); q > 0 {
			t.Fatalf("QP %d before the first frame", q)
		}
		gen, _ := videogen.NewNoise(320, 180, 6, 0)
		encodeNoise(t, enc, gen, 60, 0)
		return enc.LastQP()
	}
	low, high := qp(60e3), qp(3e6)
	t.Logf("QP at 60 kbit/s %d, at 3 Mbit/s %d", low, high)
	if low < 0 || low > 127 || high < 0 || high > 127 || low <= high+20 {
		t.Fatalf("QP %d at 60 kbit/s, %d at 3 Mbit/s", low, high)
	}
	enc, _ := New(320, 180, testFPS, 1e6)
	enc.Close()
	if enc.LastQP() != -1 {
		t.Fatal("QP of a closed encoder")
	}
}
