package vp8enc

import (
	"testing"

	"github.com/strata-rtc/strata/internal/videogen"
)

// layeredFrame is one frame of a temporal-layered encoding.
type layeredFrame struct {
	data []byte
	key  bool
	tid  int
	sync bool
}

// encodeLayered encodes n frames of the noise video with a three-layer encoder at the cumulative
// rates, forcing a keyframe at frame keyAt (besides the first).
func encodeLayered(t *testing.T, w, h, n, keyAt int, rates [3]float64) []layeredFrame {
	t.Helper()
	enc, err := NewTemporal(w, h, testFPS, rates)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enc.Close() })
	gen, _ := videogen.NewNoise(w, h, 7, 0)
	var out []layeredFrame
	for i := range n {
		if i == keyAt {
			enc.ForceKeyframe()
		}
		data, key, err := enc.Encode(gen.Next(), int64(i)*90000/testFPS)
		if err != nil {
			t.Fatal(err)
		}
		if data == nil {
			t.Fatalf("frame %d dropped: a layered encoder drops none", i)
		}
		tid, sync := enc.LastLayer()
		out = append(out, layeredFrame{data: append([]byte(nil), data...), key: key, tid: tid, sync: sync})
	}
	return out
}

// The layers follow the pattern 0,2,1,2 from every keyframe, and each layer's own rate is near
// its share of the targets (cumulative 300, 600, 1200 kbit/s: 300, 300, 600 on their own).
func TestTemporalLayers(t *testing.T) {
	const n, keyAt = 150, 70
	frames := encodeLayered(t, 640, 360, n, keyAt, [3]float64{300e3, 600e3, 1200e3})
	var bytes [3]int
	phase := 0
	for i, f := range frames {
		if f.key != (i == 0 || i == keyAt) {
			t.Fatalf("frame %d keyframe %v", i, f.key)
		}
		if f.key {
			phase = 0
		}
		if want := TemporalPattern[phase%4]; f.tid != want || f.sync != temporalSync[phase%4] {
			t.Fatalf("frame %d (phase %d): TL%d sync %v, want TL%d", i, phase%4, f.tid, f.sync, want)
		}
		phase++
		if i >= 30 { // after the first second's start-up
			bytes[f.tid] += len(f.data)
		}
	}
	secs := float64(n-30) / testFPS
	want := [3]float64{300e3, 300e3, 600e3}
	for l := range bytes {
		got := float64(bytes[l]) * 8 / secs
		t.Logf("TL%d: %.0f kbit/s (target %.0f)", l, got/1e3, want[l]/1e3)
		if got < 0.75*want[l] || got > 1.25*want[l] {
			t.Errorf("TL%d at %.0f kbit/s, target %.0f", l, got/1e3, want[l]/1e3)
		}
	}
}

// A receiver that gets only TL0, or TL0 and TL1, decodes every frame it gets to the very picture
// a receiver of the whole stream decodes: the dropped layers were nobody's reference.
func TestTemporalSubsetsDecode(t *testing.T) {
	frames := encodeLayered(t, 320, 180, 60, 33, [3]float64{150e3, 300e3, 600e3})
	full := mustDecoder(t)
	want := make([]uint64, len(frames))
	for i, f := range frames {
		_, _, sum, err := full.Decode(f.data)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		want[i] = sum
	}
	for top := 0; top < 2; top++ {
		dec := mustDecoder(t)
		kept := 0
		for i, f := range frames {
			if f.tid > top {
				continue
			}
			w, h, sum, err := dec.Decode(f.data)
			if err != nil || w != 320 || h != 180 {
				t.Fatalf("up to TL%d, frame %d: %dx%d, %v", top, i, w, h, err)
			}
			if sum != want[i] {
				t.Fatalf("up to TL%d, frame %d (TL%d) decodes to another picture than in the whole stream", top, i, f.tid)
			}
			kept++
		}
		if kept < len(frames)/4 {
			t.Fatalf("up to TL%d: %d frames", top, kept)
		}
	}
	// The check can fail: dropping a frame others predict from changes their pictures.
	dec := mustDecoder(t)
	differ := false
	for i, f := range frames {
		if i == 4 { // a base frame the next ones predict from
			continue
		}
		if _, _, sum, err := dec.Decode(f.data); err == nil && sum != want[i] {
			differ = true
		}
	}
	if !differ {
		t.Fatal("dropping a base frame changed no picture: the check proves nothing")
	}
}

func TestTemporalBadRates(t *testing.T) {
	for _, r := range [][3]float64{{0, 1e5, 2e5}, {2e5, 1e5, 3e5}, {1e5, 2e5, 2e5}} {
		if _, err := NewTemporal(320, 180, 30, r); err == nil {
			t.Errorf("rates %v accepted", r)
		}
	}
	enc, err := NewTemporal(320, 180, 30, [3]float64{1e5, 2e5, 4e5})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	if enc.SetBitrate(1e6) == nil || enc.Resize(640, 360) == nil {
		t.Error("a layered encoder changed its rate or size")
	}
}
