package plugin

import (
	"crypto/rand"
	"encoding/binary"
)

// RandomID returns a random non-zero id that fits a JavaScript number (53 bits), as Janus's room,
// participant and feed ids do.
func RandomID() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:])&(1<<53-1) | 1
}

// RandomUint32 returns a random non-zero 32-bit value (private ids, SSRCs, stream ids).
func RandomUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:]) | 1
}
