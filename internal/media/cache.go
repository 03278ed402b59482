package media

import (
	"sync"
	"time"
)

// SlotSize is the largest packet the cache keeps (a full Ethernet MTU of RTP).
const SlotSize = 1504

// Cache keeps the most recent packets of one stream, by sequence number, in fixed slots allocated
// once: storing and fetching copy bytes and allocate nothing. The slot of a packet is its sequence
// number modulo the (power-of-two) slot count, so a lookup is one index and a comparison. It is
// safe for one writer and many readers (retransmissions for several subscribers).
type Cache struct {
	mu    sync.Mutex
	mask  uint16
	meta  []slotMeta
	data  []byte
	stats CacheStats
}

type slotMeta struct {
	seq   uint16
	size  uint16
	valid bool
	at    time.Duration
}

// CacheStats counts what the cache did.
type CacheStats struct {
	Stored, TooBig, Hits, Misses uint64
}

// NewCache returns a cache of at least slots slots (rounded up to a power of two, 16 to 32768).
func NewCache(slots int) *Cache {
	n := 16
	for n < slots && n < 1<<15 {
		n <<= 1
	}
	return &Cache{mask: uint16(n - 1), meta: make([]slotMeta, n), data: make([]byte, n*SlotSize)}
}

// Slots is the number of slots.
func (c *Cache) Slots() int { return len(c.meta) }

// Store copies pkt (a whole RTP packet with sequence number seq) into its slot, replacing whatever
// was there. Packets larger than SlotSize are not kept.
func (c *Cache) Store(seq uint16, pkt []byte, now time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(pkt) > SlotSize {
		c.stats.TooBig++
		return false
	}
	i := int(seq & c.mask)
	copy(c.data[i*SlotSize:], pkt)
	c.meta[i] = slotMeta{seq: seq, size: uint16(len(pkt)), valid: true, at: now}
	c.stats.Stored++
	return true
}

// Get copies the packet with sequence number seq into dst and returns its length, or 0 when the
// cache no longer (or never) had it or dst is too small. stored is when it was stored.
func (c *Cache) Get(seq uint16, dst []byte) (n int, stored time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.meta[int(seq&c.mask)]
	if !m.valid || m.seq != seq || int(m.size) > len(dst) {
		c.stats.Misses++
		return 0, 0
	}
	i := int(seq & c.mask)
	c.stats.Hits++
	return copy(dst, c.data[i*SlotSize:i*SlotSize+int(m.size)]), m.at
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
