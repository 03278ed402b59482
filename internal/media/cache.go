package media

import (
	"cmp"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// SlotSize is the largest packet the cache keeps (a full Ethernet MTU of RTP).
const SlotSize = 1504

// Cache keeps the most recent packets of one stream, by sequence number: storing and fetching copy
// bytes and allocate nothing. The slot of a packet is its sequence number modulo the (power-of-two)
// slot count, so a lookup is one index and a comparison. The packets' bytes go one after the other
// into a ring of bytes sized for the stream (bytesPerSlot for each slot: an audio packet is a
// tenth of a video packet), so a stream of packets larger than that keeps fewer of them instead of
// none; a packet is found while its slot and its bytes are both still its own. Nothing is
// allocated before the first packet: a layer nobody sends costs a few words. It is safe for one
// writer and many readers (retransmissions for several subscribers).
type Cache struct {
	mu           sync.Mutex
	mask         uint16
	bytesPerSlot int
	bytes        int // the ring's size, allocated at the first Store
	// A growing cache (NewGrowingCache) doubles, up to maxSlots, while the packet a new one
	// replaces was stored less than horizon before it; 0: the size is fixed.
	maxSlots int
	horizon  time.Duration
	meta     []slotMeta // nil until the first Store
	data     []byte     // nil until the first Store
	head     uint64     // where the next packet's bytes go, counted from the first packet's
	stats    CacheStats
}

type slotMeta struct {
	seq   uint16
	size  uint16
	valid bool
	at    time.Duration
	start uint64 // where the packet's bytes start, counted as head is
}

// CacheStats counts what the cache did.
type CacheStats struct {
	Stored, TooBig, Hits, Misses uint64
}

// NewCache returns a cache of at least slots slots (rounded up to a power of two, 16 to 32768) and
// bytesPerSlot bytes of packet data for each (at least SlotSize in all, so that any packet fits).
func NewCache(slots, bytesPerSlot int) *Cache {
	n := 16
	for n < slots && n < 1<<15 {
		n <<= 1
	}
	return &Cache{mask: uint16(n - 1), bytesPerSlot: bytesPerSlot, bytes: max(n*bytesPerSlot, SlotSize)}
}

// NewGrowingCache returns a cache of minSlots slots that doubles, up to maxSlots, whenever a packet
// would replace one stored less than horizon before it: it keeps horizon of the stream's packets
// in as little memory as the stream's rate allows (a 150 kbit/s simulcast layer needs an eighth of
// what its 1.2 Mbit/s sibling does).
func NewGrowingCache(minSlots, maxSlots, bytesPerSlot int, horizon time.Duration) *Cache {
	c := NewCache(minSlots, bytesPerSlot)
	c.maxSlots, c.horizon = NewCache(max(minSlots, maxSlots), bytesPerSlot).Slots(), horizon
	return c
}

// Slots is the number of slots.
func (c *Cache) Slots() int { return int(c.mask) + 1 }

// Allocated is the memory the cache holds for packets: 0 until its first packet.
func (c *Cache) Allocated() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.data) + len(c.meta)*int(unsafe.Sizeof(slotMeta{}))
}

// Store copies pkt (a whole RTP packet with sequence number seq) into its slot, replacing whatever
// was there. Packets larger than SlotSize are not kept.
func (c *Cache) Store(seq uint16, pkt []byte, now time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(pkt) > SlotSize {
		c.stats.TooBig++
		return false
	}
	if c.data == nil {
		c.meta, c.data = make([]slotMeta, c.Slots()), make([]byte, c.bytes)
	}
	for c.Slots() < c.maxSlots {
		if m := &c.meta[seq&c.mask]; !m.valid || m.seq == seq || now-m.at >= c.horizon {
			break
		}
		c.grow()
	}
	c.put(seq, pkt, now)
	c.stats.Stored++
	return true
}

// grow doubles the slots and the ring of bytes, keeping every packet still intact, oldest first.
// Rare (a few times in a stream's life), so it may allocate and sort.
func (c *Cache) grow() {
	kept := make([]slotMeta, 0, len(c.meta))
	for _, m := range c.meta {
		if m.valid && c.head-m.start <= uint64(len(c.data)) {
			kept = append(kept, m)
		}
	}
	slices.SortFunc(kept, func(a, b slotMeta) int { return cmp.Compare(a.start, b.start) })
	old := c.data
	n := 2 * c.Slots()
	c.mask, c.bytes = uint16(n-1), max(n*c.bytesPerSlot, SlotSize)
	c.meta, c.data, c.head = make([]slotMeta, n), make([]byte, c.bytes), 0
	for _, m := range kept {
		off := int(m.start % uint64(len(old)))
		c.put(m.seq, old[off:off+int(m.size)], m.at)
	}
}

// put appends pkt to the ring of bytes and records it in its slot.
func (c *Cache) put(seq uint16, pkt []byte, at time.Duration) {
	off := int(c.head % uint64(len(c.data)))
	if off+len(pkt) > len(c.data) { // the packet stays in one piece: start over at the ring's start
		c.head += uint64(len(c.data) - off)
		off = 0
	}
	copy(c.data[off:], pkt)
	c.meta[seq&c.mask] = slotMeta{seq: seq, size: uint16(len(pkt)), valid: true, at: at, start: c.head}
	c.head += uint64(len(pkt))
}

// Get copies the packet with sequence number seq into dst and returns its length, or 0 when the
// cache no longer (or never) had it or dst is too small. stored is when it was stored.
func (c *Cache) Get(seq uint16, dst []byte) (n int, stored time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.meta == nil {
		c.stats.Misses++
		return 0, 0
	}
	m := c.meta[seq&c.mask]
	// The packet's bytes are intact unless later packets went all the way round the ring.
	if !m.valid || m.seq != seq || int(m.size) > len(dst) || c.head-m.start > uint64(len(c.data)) {
		c.stats.Misses++
		return 0, 0
	}
	off := int(m.start % uint64(len(c.data)))
	c.stats.Hits++
	return copy(dst, c.data[off:off+int(m.size)]), m.at
}

// Stats returns the counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Reset forgets every packet (the stream restarted).
func (c *Cache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.meta)
}
