package sfuflow

import (
	"encoding/binary"
	"testing"
	"time"
)

// vp8Packet is an RTP packet with a VP8 descriptor (X, I, 15-bit picture id) and, for a
// keyframe, the keyframe header of a w×h picture; padding-only when w < 0.
func vp8Packet(seq uint16, key bool, w, h int) []byte {
	b := make([]byte, 12, 64)
	b[0], b[1] = 0x80, 96
	binary.BigEndian.PutUint16(b[2:], seq)
	if w < 0 {
		b[0] |= 0x20
		return append(b, 0, 0, 0, 4) // 4 bytes of padding
	}
	b = append(b, 0x90, 0x80, 0x80, 0x01) // X, S, PID 0; I; picture id
	if key {
		tag := []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0, 0, 0, 0}
		binary.LittleEndian.PutUint16(tag[6:], uint16(w))
		binary.LittleEndian.PutUint16(tag[8:], uint16(h))
		return append(b, tag...)
	}
	return append(b, 0x01, 0xaa, 0xbb, 0xcc)
}

func TestLayerCounterAttributesGapsToTheirLayer(t *testing.T) {
	c := newLayerCounter([][2]int{{320, 180}, {640, 360}}, 10*time.Second)
	at := time.Second
	seq := uint16(65530) // wraps
	send := func(n int, key bool, w, h int, drop map[int]bool) {
		for i := range n {
			if !drop[i] {
				c.observe(vp8Packet(seq, key && i == 0, w, h), at)
			}
			seq++
		}
	}
	send(10, true, 320, 180, map[int]bool{3: true})          // base: 10 sent, 1 lost
	send(20, true, 640, 360, map[int]bool{5: true, 6: true}) // top: 20 sent, 2 lost
	c.observe(vp8Packet(seq, false, -1, 0), at)              // a probe: not media
	seq++
	send(5, true, 320, 180, nil) // base again: 5 sent
	at = 10*time.Second + time.Millisecond
	send(4, false, 0, 0, map[int]bool{1: true}) // in flight at the end: not counted
	s := c.summary("s", 10*time.Second)
	got := [][2]int64{{s.Layers[0].Sent, s.Layers[0].Lost}, {s.Layers[1].Sent, s.Layers[1].Lost}}
	want := [][2]int64{{15, 1}, {20, 2}}
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("sent/lost per layer %v, want %v", got, want)
	}
	if per := *s.Layers[1].PER; per != 0.1 {
		t.Errorf("top layer PER %v, want 0.1", per)
	}
	if c.current() != 1 {
		t.Errorf("current layer %d, want 1", c.current())
	}
	if s.Layers[0].GoodputBps == 0 || s.Layers[1].GoodputBps == 0 {
		t.Errorf("goodput missing: %+v", s.Layers)
	}
}

func TestSimulcastLayersAreCumulative(t *testing.T) {
	l := simulcastLayers([]float64{0.6e6, 0.6e6, 1.2e6})
	if len(l) != 3 || l[0].Kbps != 2400 || l[1].Kbps != 1200 || l[2].Kbps != 600 || l[0].Width != 1280 || l[2].RID != "q" {
		t.Fatalf("layers %+v", l)
	}
	if l := simulcastLayers([]float64{1e6}); len(l) != 1 || l[0].Width != 640 || l[0].Kbps != 1000 {
		t.Fatalf("one layer %+v", l)
	}
	if l := simulcastLayers([]float64{1e5, 2e5}); len(l) != 2 || l[0].Width != 640 || l[1].Width != 320 || l[0].Kbps != 300 {
		t.Fatalf("two layers %+v", l)
	}
}

func FuzzVP8KeyframeSize(f *testing.F) {
	f.Add(vp8Packet(1, true, 640, 360)[12:])
	f.Add(vp8Packet(1, false, 0, 0)[12:])
	f.Add([]byte{0x80})
	f.Add([]byte{0x80, 0xf0, 0x80})
	f.Fuzz(func(t *testing.T, p []byte) {
		if w, h, ok := vp8KeyframeSize(p); ok && (w > 0x3fff || h > 0x3fff) {
			t.Fatalf("size %dx%d", w, h)
		}
	})
}

func FuzzLayerCounter(f *testing.F) {
	f.Add(vp8Packet(7, true, 320, 180))
	f.Add(vp8Packet(8, false, -1, 0))
	f.Add([]byte{0x80, 0, 0, 0})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		c := newLayerCounter([][2]int{{320, 180}}, time.Second)
		c.observe(vp8Packet(1, true, 320, 180), 0)
		c.observe(pkt, 0)
		c.observe(vp8Packet(3, false, 0, 0), 0)
		for _, l := range c.summary("s", time.Second).Layers {
			if l.Lost < 0 || l.Lost > l.Sent {
				t.Fatalf("lost %d of %d", l.Lost, l.Sent)
			}
		}
	})
}
