package mediasrc

import (
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/vp8enc"
)

// TestTemporalClip generates (once; later runs reuse the cache) and reads seed 000's layered
// clip: 30 fps, a keyframe at each scene change, the layers' pattern from each keyframe, and
// each layer's own rate near its target (0.6, 0.6, 1.2 Mbit/s).
func TestTemporalClip(t *testing.T) {
	m, err := LoadTemporal(DefaultDir(), SeedTemporal)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Video[0]
	if len(m.Video) != 1 || !c.Temporal || c.Interval != time.Second/clipFPS || len(c.Frames) != len(scenes)*sceneFrames {
		t.Fatalf("%d clips, temporal %v, interval %v, %d frames", len(m.Video), c.Temporal, c.Interval, len(c.Frames))
	}
	for s := range scenes {
		if i := s * sceneFrames; !c.Frames[i].Key {
			t.Errorf("scene %d starts at frame %d without a keyframe", s, i)
		}
	}
	rates := c.LayerKbps()
	want := [3]float64{600, 600, 1200}
	for l, r := range rates {
		t.Logf("TL%d: %.0f kbit/s (target %.0f)", l, r, want[l])
		if r < 0.8*want[l] || r > 1.2*want[l] {
			t.Errorf("TL%d at %.0f kbit/s, target %.0f", l, r, want[l])
		}
	}
	phase := 0
	for i, f := range c.Frames {
		if f.Key {
			phase = 0
		}
		if want := [4]int8{0, 2, 1, 2}[phase%4]; f.TID != want || (f.Key && !f.Sync) {
			t.Fatalf("frame %d: TL%d sync %v, want TL%d", i, f.TID, f.Sync, want)
		}
		phase++
	}
}

// The layered clip, thinned as a switch thins it (TL2 dropped, or TL1 and TL2), decodes with
// libvpx to the very pictures the whole clip gives, frame for frame.
func TestTemporalClipSubsetsDecode(t *testing.T) {
	m, err := LoadTemporal(DefaultDir(), SeedTemporal)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Video[0]
	frame := func(f Frame) []byte {
		var b []byte
		for _, ch := range f.Chunks {
			b = append(b, ch...)
		}
		return b
	}
	want := make([]uint64, len(c.Frames))
	for top := int8(2); top >= 0; top-- {
		sub, err := c.Thinned(int(top) + 1) // what a sender of top+1 layers sends
		if err != nil {
			t.Fatal(err)
		}
		dec, err := vp8enc.NewDecoder()
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for i, f := range sub.Frames {
			if f.TID > sub.TopTID {
				continue
			}
			w, h, sum, err := dec.Decode(frame(f))
			if err != nil || w != SeedTemporal.Width || h != SeedTemporal.Height {
				t.Fatalf("up to TL%d, frame %d: %dx%d, %v", top, i, w, h, err)
			}
			if top == 2 {
				want[i] = sum
			} else if sum != want[i] {
				t.Fatalf("up to TL%d, frame %d (TL%d) decodes to another picture than in the whole clip", top, i, f.TID)
			}
			kept++
		}
		dec.Close()
		if wantKept := len(c.Frames) >> (2 - top); kept < wantKept*9/10 || kept > wantKept*11/10 {
			t.Errorf("up to TL%d: %d of %d frames", top, kept, len(c.Frames))
		}
	}
}

// descRecorder parses what the pacer writes with the SFU's own VP8 parser.
type descRecorder struct {
	flags []media.Flags
	tl0   []uint8
	pics  []uint16
	first []bool
	ts    []uint32
	seqs  []uint16
}

func (r *descRecorder) WriteRTP(p *rtp.Packet) error {
	f, ok := media.ParseVP8(p.Payload)
	if !ok || f.TL0Pos == 0 || f.PicIDPos == 0 || !f.PicID15 {
		return nil
	}
	r.ts = append(r.ts, p.Timestamp)
	r.seqs = append(r.seqs, p.SequenceNumber)
	r.flags = append(r.flags, f)
	r.tl0 = append(r.tl0, p.Payload[f.TL0Pos])
	r.pics = append(r.pics, uint16(p.Payload[f.PicIDPos]&0x7f)<<8|uint16(p.Payload[f.PicIDPos+1]))
	r.first = append(r.first, p.Payload[0]&0x10 != 0)
	return nil
}

// syntheticTemporal is a layered clip of n frames of size bytes, a keyframe every gop.
func syntheticTemporal(n, gop, size int) *VideoClip {
	c := synthetic(n, gop, size)
	c.setTemporal()
	return c
}

// The pacer writes each frame's TID, Y and TL0PICIDX in every packet's descriptor, and
// internal/media reads them back: TL0PICIDX counts the base frames, the others carry their base
// frame's; N marks TL2 (no frame references it).
func TestPacerWritesTemporalDescriptor(t *testing.T) {
	clip := syntheticTemporal(40, 13, 2500) // 3 packets a frame; keyframes at 0, 13, 26, 39
	rec := &descRecorder{}
	p := NewPacer(&Media{Video: []*VideoClip{clip}}, nil, []Writer{rec}, 0)
	var now time.Duration
	run(p, &now, 40*clip.Interval-time.Millisecond)
	if len(rec.flags) != 40*3 {
		t.Fatalf("%d packets with a full descriptor, want 120", len(rec.flags))
	}
	for i, f := range rec.flags {
		fr := clip.Frames[i/3]
		if f.TID != fr.TID || f.SwitchUp != (fr.Sync || fr.Key) || f.Discardable != (fr.TID == 2) || f.Keyframe != (fr.Key && i%3 == 0) {
			t.Fatalf("packet %d: %+v, frame TL%d sync %v key %v", i, f, fr.TID, fr.Sync, fr.Key)
		}
		if rec.first[i] != (i%3 == 0) {
			t.Fatalf("packet %d: S %v", i, rec.first[i])
		}
		if i == 0 {
			continue
		}
		wantTL0 := rec.tl0[i-1]
		if i%3 == 0 && fr.TID == 0 {
			wantTL0++
		}
		if rec.tl0[i] != wantTL0 {
			t.Fatalf("packet %d (TL%d): TL0PICIDX %d after %d", i, fr.TID, rec.tl0[i], rec.tl0[i-1])
		}
		if wantPic := (rec.pics[i-1] + uint16(btoi(i%3 == 0))) & 0x7fff; rec.pics[i] != wantPic {
			t.Fatalf("packet %d: picture id %d after %d", i, rec.pics[i], rec.pics[i-1])
		}
	}
	q := NewPacer(&Media{Video: []*VideoClip{clip}}, nil, []Writer{discard{}}, 0)
	now = 0
	if n := testing.AllocsPerRun(200, func() { now = q.Step(now) }); n != 0 {
		t.Fatalf("Step of a layered clip allocates %.1f times", n)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A sender of one or two temporal layers (a thinned clip) sends only TL0, or TL0 and TL1: one
// packet sequence without holes, picture ids continuous over the frames sent, TL0PICIDX counting
// the base frames, N on the top layer's frames (TL1 when TL2 is not sent), timestamps at the
// frames' own times; without allocating.
func TestPacerSendsTemporalSubset(t *testing.T) {
	clip := syntheticTemporal(40, 13, 2500) // 3 packets a frame; keyframes at 0, 13, 26, 39
	step := uint32(clip.Interval * 90000 / time.Second)
	for layers := 1; layers <= 2; layers++ {
		sub, err := clip.Thinned(layers)
		if err != nil {
			t.Fatal(err)
		}
		var want []int // the frames sent
		for i, f := range clip.Frames {
			if int(f.TID) < layers {
				want = append(want, i)
			}
		}
		rec := &descRecorder{}
		p := NewPacer(&Media{Video: []*VideoClip{sub}}, nil, []Writer{rec}, 0)
		var now time.Duration
		run(p, &now, 40*clip.Interval-time.Millisecond)
		if len(rec.flags) != 3*len(want) {
			t.Fatalf("%d layers: %d packets, want %d (frames %v)", layers, len(rec.flags), 3*len(want), want)
		}
		for i, f := range rec.flags {
			fi := want[i/3]
			fr := clip.Frames[fi]
			if f.TID != fr.TID || f.Discardable != (int(fr.TID) == layers-1 && fr.TID > 0) {
				t.Fatalf("%d layers, packet %d (frame %d TL%d): %+v", layers, i, fi, fr.TID, f)
			}
			if i == 0 {
				continue
			}
			prev := clip.Frames[want[(i-1)/3]]
			newFrame := i%3 == 0
			if rec.seqs[i] != rec.seqs[i-1]+1 {
				t.Fatalf("%d layers, packet %d: sequence number %d after %d", layers, i, rec.seqs[i], rec.seqs[i-1])
			}
			if wantPic := (rec.pics[i-1] + uint16(btoi(newFrame))) & 0x7fff; rec.pics[i] != wantPic {
				t.Fatalf("%d layers, packet %d: picture id %d after %d", layers, i, rec.pics[i], rec.pics[i-1])
			}
			if wantTL0 := rec.tl0[i-1] + uint8(btoi(newFrame && fr.TID == 0)); rec.tl0[i] != wantTL0 {
				t.Fatalf("%d layers, packet %d: TL0PICIDX %d after %d", layers, i, rec.tl0[i], rec.tl0[i-1])
			}
			if d := rec.ts[i] - rec.ts[i-1]; newFrame && d != uint32(fi-want[(i-1)/3])*step || !newFrame && d != 0 {
				t.Fatalf("%d layers, packet %d (frame %d after a TL%d frame): timestamp step %d", layers, i, fi, prev.TID, d)
			}
		}
		q := NewPacer(&Media{Video: []*VideoClip{sub}}, nil, []Writer{discard{}}, 0)
		now = 0
		if n := testing.AllocsPerRun(200, func() { now = q.Step(now) }); n != 0 {
			t.Fatalf("Step of a clip thinned to %d layers allocates %.1f times", layers, n)
		}
	}
	if _, err := clip.Thinned(0); err == nil {
		t.Error("a clip thinned to no layers")
	}
	if _, err := synthetic(4, 2, 100).Thinned(1); err == nil {
		t.Error("a clip without temporal layers thinned")
	}
}
