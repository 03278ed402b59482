package media

import (
	"testing"
	"time"
)

// TestCacheAllocatesAtTheFirstPacket: a cache nobody stores into holds no slots and no bytes, and
// misses.
func TestCacheAllocatesAtTheFirstPacket(t *testing.T) {
	c := NewCache(512, SlotSize)
	if c.meta != nil || c.data != nil {
		t.Fatal("a new cache allocated its slots")
	}
	if n, _ := c.Get(3, make([]byte, SlotSize)); n != 0 {
		t.Fatal("an empty cache returned a packet")
	}
	c.Store(3, []byte{1, 2, 3}, 0)
	if len(c.meta) != 512 || len(c.data) != 512*SlotSize {
		t.Fatalf("after a packet: %d slots, %d bytes", len(c.meta), len(c.data))
	}
}

// TestCacheOfSmallSlotsKeepsFewerLargePackets: a cache sized for audio keeps every slot's packet
// while packets are audio-sized, and the most recent packets that fit in its bytes when they are
// larger (never a packet whose bytes a later one overwrote).
func TestCacheOfSmallSlotsKeepsFewerLargePackets(t *testing.T) {
	c := NewCache(64, 256)
	buf := make([]byte, SlotSize)
	packet := func(seq uint16, size int) []byte {
		p := make([]byte, size)
		for i := range p {
			p[i] = byte(int(seq) + i)
		}
		return p
	}
	check := func(seq uint16, size int, want bool) {
		t.Helper()
		n, _ := c.Get(seq, buf)
		if !want {
			if n != 0 {
				t.Fatalf("seq %d: found, want gone", seq)
			}
			return
		}
		if n != size || string(buf[:n]) != string(packet(seq, size)) {
			t.Fatalf("seq %d: %d bytes, want %d intact", seq, n, size)
		}
	}
	for seq := uint16(0); seq < 200; seq++ {
		c.Store(seq, packet(seq, 120), 0) // Opus at 32 kbit/s
	}
	for seq := uint16(136); seq < 200; seq++ {
		check(seq, 120, true) // the last 64, one per slot
	}
	check(135, 0, false)
	// 1300-byte packets (Opus at 510 kbit/s): 16 KiB of ring holds the last 12 of them.
	for seq := uint16(200); seq < 300; seq++ {
		c.Store(seq, packet(seq, 1300), 0)
	}
	kept := 0
	for seq := uint16(236); seq < 300; seq++ {
		if n, _ := c.Get(seq, buf); n != 0 {
			check(seq, 1300, true)
			kept++
		} else if kept > 0 {
			t.Fatalf("seq %d is gone but an older one is kept", seq)
		}
	}
	if want := 64 * 256 / 1300; kept < want-1 || kept > want {
		t.Fatalf("kept %d packets of 1300 bytes, want about %d", kept, want)
	}
}

// TestCacheStoresAndGetsWithoutAllocating: the media path's use of the cache allocates nothing.
func TestCacheStoresAndGetsWithoutAllocating(t *testing.T) {
	c := NewCache(512, 1200)
	pkt, dst := make([]byte, 1100), make([]byte, SlotSize)
	seq := uint16(0)
	c.Store(seq, pkt, 0)
	if a := testing.AllocsPerRun(1000, func() {
		seq++
		c.Store(seq, pkt[:int(seq)%1000+100], time.Duration(seq))
		c.Get(seq-50, dst)
	}); a != 0 {
		t.Fatalf("%v allocations per packet", a)
	}
}

// TestGrowingCacheFollowsTheRate: a growing cache doubles while it would replace packets younger
// than its horizon, up to its maximum, and keeps every packet of the horizon intact through it.
func TestGrowingCacheFollowsTheRate(t *testing.T) {
	const horizon = 2 * time.Second
	for _, tc := range []struct{ perSecond, want int }{{20, 64}, {40, 128}, {110, 256}, {400, 512}} {
		c := NewGrowingCache(64, 512, 1200, horizon)
		gap := time.Second / time.Duration(tc.perSecond)
		n := 10 * tc.perSecond
		for i := range n {
			seq := uint16(65000 + i)
			c.Store(seq, []byte{byte(seq), byte(seq >> 8), byte(i)}, time.Duration(i)*gap)
		}
		if c.Slots() != tc.want {
			t.Errorf("%d packets/s: %d slots, want %d", tc.perSecond, c.Slots(), tc.want)
		}
		buf := make([]byte, SlotSize)
		for i := n - min(int(horizon/gap), 512); i < n; i++ {
			seq := uint16(65000 + i)
			if k, _ := c.Get(seq, buf); k != 3 || buf[0] != byte(seq) || buf[1] != byte(seq>>8) || buf[2] != byte(i) {
				t.Fatalf("%d packets/s: packet %d of the horizon: %x", tc.perSecond, i, buf[:k])
			}
		}
	}
}
