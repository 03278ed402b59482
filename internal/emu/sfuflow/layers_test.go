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
	c := newLayerCounter([][2]int{{320, 180}, {640, 360}})
	at := time.Second
	seq := uint16(65530) // wraps
	send := func(n int, key bool, w, h int, drop map[int]bool) {
		for i := range n {
			if !drop[i] {
				c.observe(vp8Packet(seq, key && i == 0, w, h), at)
			}
			seq++
			at += 10 * time.Millisecond
		}
	}
	send(10, true, 320, 180, map[int]bool{3: true})          // base: 10 sent, 1 lost
	send(20, true, 640, 360, map[int]bool{5: true, 6: true}) // top: 20 sent, 2 lost
	c.observe(vp8Packet(seq, false, -1, 0), at)              // a probe: not media
	seq++
	send(5, true, 320, 180, map[int]bool{1: true}) // base again: 5 sent, 1 lost
	st := c.stats("s", "bwe", 100, 100*time.Millisecond)
	got := [][2]int64{{st.Layers[0].Sent, st.Layers[0].Received}, {st.Layers[1].Sent, st.Layers[1].Received}}
	want := [][2]int64{{15, 13}, {20, 18}}
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("sent/received per layer %v, want %v", got, want)
	}
	// The top layer ran from 1.1 s to 1.3 s: its packets are in those bins.
	if st.Layers[1].BinSent[11] == 0 || st.Layers[1].BinSent[10] != 0 || st.Layers[1].GoodputBytes == 0 {
		t.Errorf("top layer bins %v, goodput %d", st.Layers[1].BinSent[9:14], st.Layers[1].GoodputBytes)
	}
	if st.BinForwarded[10] != 1 || st.BinForwarded[12] != 2 || st.BinForwarded[13] != 1 {
		t.Errorf("forwarded per bin %v", st.BinForwarded[9:15])
	}
	if c.current() != 1 {
		t.Errorf("current layer %d, want 1", c.current())
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
		c := newLayerCounter([][2]int{{320, 180}})
		c.observe(vp8Packet(1, true, 320, 180), 0)
		c.observe(pkt, 0)
		c.observe(vp8Packet(3, false, 0, 0), 0)
		for _, l := range c.stats("s", "bwe", 10, 100*time.Millisecond).Layers {
			if l.Received < 0 || l.Received > l.Sent {
				t.Fatalf("received %d of %d", l.Received, l.Sent)
			}
		}
	})
}
