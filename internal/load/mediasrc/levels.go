package mediasrc

import (
	"sync"

	"github.com/pion/rtp"
)

// levelExtensions holds, for one extension id, the header extension carrying each of the 256
// values of the RFC 6464 byte, built once so that sending a level allocates nothing.
type levelExtensions [256][]rtp.Extension

var (
	levelMu     sync.Mutex
	levelTables = map[uint8]*levelExtensions{}
)

// levelTable returns the (shared, read-only) table for extension id.
func levelTable(id uint8) *levelExtensions {
	levelMu.Lock()
	defer levelMu.Unlock()
	if t := levelTables[id]; t != nil {
		return t
	}
	t := &levelExtensions{}
	for b := range t {
		var h rtp.Header
		_ = h.SetExtension(id, []byte{byte(b)}) // one-byte form: ids 1…14 (a negotiated id is one)
		// Capacity = length: an interceptor appending its own extension must copy, not write here.
		t[b] = h.Extensions[:len(h.Extensions):len(h.Extensions)]
	}
	levelTables[id] = t
	return t
}
