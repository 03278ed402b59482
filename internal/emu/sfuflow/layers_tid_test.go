package sfuflow

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/topo"
)

// tidPacket is an RTP packet of a temporal-layered VP8 stream: descriptor X, S (start), I with a
// 15-bit picture id, L (TL0PICIDX 7), T with tid; marker on a frame's last packet.
func tidPacket(seq uint16, tid int, start, marker bool) []byte {
	return tidPacketTL0(seq, tid, 7, start, marker)
}

// tidPacketTL0 is tidPacket with TL0PICIDX tl0.
func tidPacketTL0(seq uint16, tid int, tl0 byte, start, marker bool) []byte {
	b := make([]byte, 12, 32)
	b[0], b[1] = 0x80, 96
	if marker {
		b[1] |= 0x80
	}
	binary.BigEndian.PutUint16(b[2:], seq)
	d0 := byte(0x80)
	if start {
		d0 |= 0x10
	}
	return append(b, d0, 0xe0, 0x80, 0x01, tl0, byte(tid)<<6, 0x01, 0xaa, 0xbb)
}

func TestTIDCounterCountsLayersAndAttributesGaps(t *testing.T) {
	c := newTIDCounter(3)
	seq := uint16(65533) // wraps
	at := time.Second
	pattern := []int{0, 2, 1, 2}
	lost := map[int]bool{
		4:  true,           // frame 2 (TL1), its first packet: in the frame that goes on (TL1)
		7:  true,           // frame 3 (TL2), its last packet: in the frame that had begun (TL2)
		12: true, 13: true, // frame 6 (TL1) whole: in the next frame's layer (TL2)
		16: true, 17: true, // frame 8 (TL0) whole: TL0PICIDX goes up past it (TL0)
	}
	n, tl0 := 0, byte(254) // TL0PICIDX wraps
	for f := range 10 {
		if pattern[f%4] == 0 {
			tl0++
		}
		for p := range 2 {
			if !lost[n] {
				c.observe(tidPacketTL0(seq, pattern[f%4], tl0, p == 0, p == 1), at)
			}
			n++
			seq++
		}
		at += 33 * time.Millisecond
	}
	st := c.stats("s", "bwe", 100, 100*time.Millisecond)
	type sr struct{ sent, recv int64 }
	got := []sr{}
	for _, l := range st.Layers {
		got = append(got, sr{l.Sent, l.Received})
	}
	// TL0: frames 0, 4 and 8 (lost); TL1: frame 2 (frame 6, lost whole, counts in the next
	// frame's layer); TL2: frames 1, 3, 5, 7, 9 and frame 6's two packets.
	want := []sr{{6, 4}, {2, 1}, {12, 9}}
	for l := range want {
		if got[l] != want[l] {
			t.Errorf("TL%d sent/received %v, want %v", l, got[l], want[l])
		}
	}
	if st.BinForwarded[10] != 3 {
		t.Errorf("forwarded per bin %v, want 3 layers in bin 10", st.BinForwarded[9:13])
	}
	if c.current() != 3 {
		t.Errorf("current %d, want 3", c.current())
	}
	// Only the base layer for over a second: current falls to 1.
	for range 40 {
		c.observe(tidPacket(seq, 0, true, true), at)
		seq++
		at += 33 * time.Millisecond
	}
	if c.current() != 1 {
		t.Errorf("current %d after a second of TL0 only, want 1", c.current())
	}
}

func FuzzTIDCounter(f *testing.F) {
	f.Add(tidPacket(7, 1, true, false))
	f.Add(vp8Packet(8, false, -1, 0))
	f.Add([]byte{0x80, 0, 0, 0})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		c := newTIDCounter(3)
		c.observe(tidPacket(1, 0, true, true), 0)
		c.observe(pkt, 0)
		c.observe(tidPacket(5, 2, true, true), 0)
		for _, l := range c.stats("s", "bwe", 10, 100*time.Millisecond).Layers {
			if l.Received < 0 || l.Received > l.Sent {
				t.Fatalf("received %d of %d", l.Received, l.Sent)
			}
		}
		_ = c.current()
	})
}

// With the layers marked, a session's per-layer losses are the link's drops of each mark, placed
// in time where the receiver saw holes; without marks the receiver's counts stand.
func TestLinkCountsReplaceHolesWhenMarked(t *testing.T) {
	c := newTIDCounter(3)
	seq, at := uint16(1), time.Second
	for f := range 40 {
		if f == 20 { // a hole of 4 (a switch dropping two TL2 frames, say), counted when the packet before it
			// arrived: bin 13
			seq += 4
		}
		c.observe(tidPacket(seq, []int{0, 2, 1, 2}[f%4], true, true), at)
		seq++
		at += 20 * time.Millisecond
	}
	st := c.stats("s", "network", 30, 100*time.Millisecond)
	if applyLinkCounts(st, []topo.ClassCounts{{DSCP: 0, Arrived: 40}}, Env{}.layerMarks()) {
		t.Fatal("unmarked packets replaced the receiver's counts")
	}
	if st.Layers[2].Sent-st.Layers[2].Received+st.Layers[0].Sent-st.Layers[0].Received+st.Layers[1].Sent-st.Layers[1].Received != 4 {
		t.Fatalf("receiver: %+v", st.Layers)
	}
	classes := []topo.ClassCounts{{DSCP: 34, Arrived: 10}, {DSCP: 36, Arrived: 11, Dropped: 1}, {DSCP: 38, Arrived: 22, Dropped: 2}}
	if !applyLinkCounts(st, classes, Env{}.layerMarks()) {
		t.Fatal("marked packets ignored")
	}
	for l, want := range []int64{0, 1, 2} {
		x := st.Layers[l]
		if x.Sent-x.Received != want {
			t.Errorf("TL%d: sent %d received %d, want %d lost", l, x.Sent, x.Received, want)
		}
		var lostInBins int64
		for b := range x.BinSent {
			lostInBins += int64(x.BinSent[b] - x.BinRecvOfSent[b])
			if b != 13 && x.BinSent[b] != x.BinRecvOfSent[b] {
				t.Errorf("TL%d: a loss in bin %d, not where the hole was (bin 13)", l, b)
			}
		}
		if lostInBins != want {
			t.Errorf("TL%d: %d lost in the bins, want %d", l, lostInBins, want)
		}
	}
	if got := spread(5, []int64{1, 0, 2, 2}); got[0]+got[1]+got[2]+got[3] != 5 || got[1] != 0 {
		t.Errorf("spread %v", got)
	}
}

// A session of one or two temporal layers (TL0, or TL0 and TL1 at 15 fps) is counted in that many
// layers, and its losses come from the link's counts of its own marks (the first ones).
func TestFewerTemporalLayersCountedAndMarked(t *testing.T) {
	for layers := 1; layers <= 2; layers++ {
		c := newTIDCounter(layers)
		seq, at := uint16(1), time.Second
		for f := range 40 {
			if f == 20 {
				seq += 2 // a hole: a frame the link dropped
			}
			c.observe(tidPacket(seq, f%layers, true, true), at)
			seq++
			at += 33 * time.Millisecond
		}
		if c.current() != layers {
			t.Errorf("%d layers: current %d", layers, c.current())
		}
		st := c.stats("s", "network", 30, 100*time.Millisecond)
		if len(st.Layers) != layers || st.BinForwarded[20] != float64(layers) {
			t.Fatalf("%d layers: %d counted, forwarded %v", layers, len(st.Layers), st.BinForwarded[18:22])
		}
		for l := range st.Layers {
			if st.Layers[l].Received != int64(40/layers) {
				t.Errorf("%d layers: TL%d received %d, want %d", layers, l, st.Layers[l].Received, 40/layers)
			}
		}
		// The link dropped two packets of the top layer's mark; a mark the session has no layer
		// for (a higher one) changes nothing.
		classes := []topo.ClassCounts{{DSCP: 34, Arrived: 20}, {DSCP: 36, Arrived: 20}, {DSCP: 38, Arrived: 9, Dropped: 9}}
		top := &classes[layers-1]
		top.Arrived, top.Dropped = top.Arrived+2, 2
		if !applyLinkCounts(st, classes, Env{}.layerMarks()) {
			t.Fatalf("%d layers: marked packets ignored", layers)
		}
		for l := range st.Layers {
			want := int64(0)
			if l == layers-1 {
				want = 2
			}
			if x := st.Layers[l]; x.Sent-x.Received != want {
				t.Errorf("%d layers: TL%d sent %d received %d, want %d lost", layers, l, x.Sent, x.Received, want)
			}
		}
	}
}
