package vp8enc

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/strata-rtc/strata/internal/videogen"
)

const testFPS = 30

// encodeNoise encodes frames of the lab's noise video with enc and returns each frame's size
// (0 for a dropped frame), checking that every frame is a well-formed VP8 frame.
func encodeNoise(t testing.TB, enc *Encoder, gen *videogen.Noise, frames int, first int64) []int {
	t.Helper()
	sizes := make([]int, frames)
	for i := range sizes {
		data, key, err := enc.Encode(gen.Next(), (first+int64(i))*90000/testFPS)
		if err != nil {
			t.Fatal(err)
		}
		if data != nil {
			checkFrame(t, data, key, enc.width, enc.height)
		}
		sizes[i] = len(data)
	}
	return sizes
}

// checkFrame checks the VP8 frame tag (RFC 6386 section 9.1): the keyframe bit, version, the
// first partition's size within the frame and, on keyframes, the start code and dimensions.
func checkFrame(t testing.TB, data []byte, key bool, width, height int) {
	t.Helper()
	if len(data) < 3 {
		t.Fatalf("a %d-byte frame", len(data))
	}
	tag := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16
	if isKey := tag&1 == 0; isKey != key {
		t.Fatalf("frame tag says keyframe %v, the encoder %v", isKey, key)
	}
	if version := tag >> 1 & 7; version > 3 {
		t.Fatalf("version %d", version)
	}
	if tag&0x10 == 0 {
		t.Fatal("a frame that is not shown")
	}
	header := 3
	if key {
		header = 10
		if len(data) < header || !bytes.Equal(data[3:6], []byte{0x9d, 0x01, 0x2a}) {
			t.Fatalf("keyframe without the start code: % x", data[:min(len(data), 6)])
		}
		w, h := binary.LittleEndian.Uint16(data[6:8])&0x3fff, binary.LittleEndian.Uint16(data[8:10])&0x3fff
		if int(w) != width || int(h) != height {
			t.Fatalf("keyframe of %dx%d, want %dx%d", w, h, width, height)
		}
	}
	if first := int(tag >> 5); header+first > len(data) {
		t.Fatalf("first partition of %d bytes in a %d-byte frame", first, len(data))
	}
}

// rate is the bit rate of frames sizes[from:to] at testFPS.
func rate(sizes []int, from, to int) float64 {
	sum := 0
	for _, s := range sizes[from:to] {
		sum += s
	}
	return float64(sum) * 8 * testFPS / float64(to-from)
}

// The encoder meets its target on the noise video: over 5 s after a 1 s start, the output rate
// is within 15 % of 300 kbit/s, 1.5 Mbit/s and 3 Mbit/s at 640x360.
func TestMeetsTarget(t *testing.T) {
	for _, target := range []float64{300e3, 1.5e6, 3e6} {
		enc, err := New(640, 360, testFPS, target)
		if err != nil {
			t.Fatal(err)
		}
		gen, _ := videogen.NewNoise(640, 360, 1, 0)
		sizes := encodeNoise(t, enc, gen, 6*testFPS, 0)
		_ = enc.Close()
		got := rate(sizes, testFPS, len(sizes))
		dropped := 0
		for _, s := range sizes {
			if s == 0 {
				dropped++
			}
		}
		t.Logf("target %.0f kbit/s: %.0f kbit/s, %d of %d frames dropped", target/1e3, got/1e3, dropped, len(sizes))
		if got < 0.85*target || got > 1.15*target {
			t.Errorf("target %.0f kbit/s: encoded %.0f kbit/s", target/1e3, got/1e3)
		}
		if sizes[0] == 0 {
			t.Error("the first frame was dropped")
		}
	}
}

// A new target is followed within a second: after a step from 1.5 Mbit/s down to 500 kbit/s and
// back up, the second after the first second of each step is within 20 % of the new target.
func TestBitrateStep(t *testing.T) {
	enc := mustNew(t, 640, 360, testFPS, 1.5e6)
	gen, _ := videogen.NewNoise(640, 360, 2, 0)
	n := int64(0)
	step := func(target float64) float64 {
		if err := enc.SetBitrate(target); err != nil {
			t.Fatal(err)
		}
		sizes := encodeNoise(t, enc, gen, 2*testFPS, n)
		n += int64(len(sizes))
		return rate(sizes, testFPS, 2*testFPS)
	}
	step(1.5e6)
	for _, target := range []float64{500e3, 1.5e6} {
		got := step(target)
		t.Logf("target %.0f kbit/s: %.0f kbit/s in the second after the first", target/1e3, got/1e3)
		if got < 0.8*target || got > 1.2*target {
			t.Errorf("target %.0f kbit/s: %.0f kbit/s in its second second", target/1e3, got/1e3)
		}
	}
}

// ForceKeyframe makes the next frame a keyframe, and only it.
func TestForceKeyframe(t *testing.T) {
	enc := mustNew(t, 320, 180, testFPS, 500e3)
	gen, _ := videogen.NewNoise(320, 180, 3, 0)
	keys := 0
	for i := range 20 {
		if i == 10 {
			enc.ForceKeyframe()
		}
		data, key, err := enc.Encode(gen.Next(), int64(i)*3000)
		if err != nil {
			t.Fatal(err)
		}
		if data != nil {
			checkFrame(t, data, key, 320, 180)
		}
		if key != (i == 0 || i == 10) {
			t.Fatalf("frame %d: keyframe %v", i, key)
		}
		if key {
			keys++
		}
	}
	if keys != 2 {
		t.Fatalf("%d keyframes", keys)
	}
}

// The frames decode with libvpx's own decoder to the encoder's size.
func TestDecodes(t *testing.T) {
	enc := mustNew(t, 320, 180, testFPS, 800e3)
	dec := mustDecoder(t)
	gen, _ := videogen.NewNoise(320, 180, 4, 0)
	decoded := 0
	for i := range 30 {
		data, _, err := enc.Encode(gen.Next(), int64(i)*3000)
		if err != nil {
			t.Fatal(err)
		}
		if data == nil {
			continue
		}
		w, h, err := dec.decode(data)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if w != 320 || h != 180 {
			t.Fatalf("frame %d decoded to %dx%d", i, w, h)
		}
		decoded++
	}
	if decoded < 25 {
		t.Fatalf("only %d of 30 frames", decoded)
	}
	if _, _, err := dec.decode([]byte{1, 2, 3, 4, 5}); err == nil {
		t.Fatal("garbage decoded")
	}
}

// Bad sizes, rates and frames are refused; Close is safe twice and a closed encoder says so.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		w, h      int
		fps, rate float64
	}{{0, 360, 30, 1e6}, {641, 360, 30, 1e6}, {640, 361, 30, 1e6}, {1 << 14, 360, 30, 1e6},
		{640, 360, 0, 1e6}, {640, 360, 30, 0}, {-2, 360, 30, 1e6}} {
		if enc, err := New(c.w, c.h, c.fps, c.rate); err == nil {
			_ = enc.Close()
			t.Errorf("New(%d, %d, %v, %v) succeeded", c.w, c.h, c.fps, c.rate)
		}
	}
	enc, err := New(64, 64, 30, 100e3)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := enc.Encode(make([]byte, 64*64), 0); err == nil {
		t.Error("a short frame was encoded")
	}
	if err := enc.SetBitrate(-1); err == nil {
		t.Error("a negative bitrate was taken")
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := enc.Encode(make([]byte, 64*64*3/2), 0); err != ErrClosed {
		t.Errorf("Encode after Close: %v", err)
	}
	if err := enc.SetBitrate(1e6); err != ErrClosed {
		t.Errorf("SetBitrate after Close: %v", err)
	}
}

// Encoding reuses its output buffer: no allocation per frame once it has grown.
func TestEncodeAllocs(t *testing.T) {
	enc := mustNew(t, 320, 180, testFPS, 1e6)
	gen, _ := videogen.NewNoise(320, 180, 5, 0)
	encodeNoise(t, enc, gen, 10, 0)
	frame := gen.Next()
	pts := int64(10 * 3000)
	allocs := testing.AllocsPerRun(20, func() {
		if _, _, err := enc.Encode(frame, pts); err != nil {
			t.Fatal(err)
		}
		pts += 3000
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per frame", allocs)
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, size := range []struct {
		name string
		w, h int
		rate float64
	}{
		{"640x360", 640, 360, 1e6}, {"1280x720", 1280, 720, 2.5e6}} {
		b.Run(size.name, func(b *testing.B) {
			enc, err := New(size.w, size.h, testFPS, size.rate)
			if err != nil {
				b.Fatal(err)
			}
			defer enc.Close()
			gen, _ := videogen.NewNoise(size.w, size.h, 1, testFPS*videogen.NoiseLoop)
			frames := make([][]byte, 8)
			for i := range frames {
				frames[i] = bytes.Clone(gen.Next())
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, _, err := enc.Encode(frames[i%len(frames)], int64(i)*3000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// mustNew opens an encoder for the test, closed at its end (Close is idempotent).
func mustNew(t testing.TB, width, height int, fps, bps float64) *Encoder {
	t.Helper()
	enc, err := New(width, height, fps, bps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enc.Close() })
	return enc
}

// mustDecoder opens libvpx's decoder for the test, closed at its end.
func mustDecoder(t testing.TB) *Decoder {
	t.Helper()
	dec, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dec.Close)
	return dec
}
