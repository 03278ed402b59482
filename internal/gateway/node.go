package gateway

import (
	"math/rand/v2"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/janus"
)

// WithNode makes the gateway one node of a cluster (docs/CLUSTER.md). slot gives the node's slot,
// which every new session id then carries so that any node can tell which one holds a session; it
// is a function because a node learns its slot only once it has claimed one (0 until then: ids as
// without a cluster). accepting says whether the node takes new sessions: while it does not
// (draining, full, cut off from the engine), create is refused with 472 and the reason, on every
// transport. Either may be nil.
func WithNode(slot func() int, accepting func() (bool, string)) Option {
	return func(g *Gateway) {
		g.slot = slot
		g.accepting = accepting
	}
}

// nodeSlot is the slot new session ids carry (0: none).
func (g *Gateway) nodeSlot() int {
	if g.slot == nil {
		return 0
	}
	if s := g.slot(); s > 0 && s <= cluster.MaxSlot {
		return s
	}
	return 0
}

// refuseByNode is the 472 of a node that takes no new sessions, nil when it takes them.
func (g *Gateway) refuseByNode() *janus.Error {
	if g.accepting == nil {
		return nil
	}
	ok, why := g.accepting()
	if ok {
		return nil
	}
	if why == "" {
		why = "this node takes no new sessions"
	}
	return janus.Errorf(janus.ErrNotAcceptingSessions, "Not accepting new sessions: %s", why)
}

// checkChosenID refuses a client-chosen session id that another node's slot would route elsewhere.
func checkChosenID(id uint64, slot int) *janus.Error {
	if slot == 0 || cluster.SessionSlot(id) == slot {
		return nil
	}
	return janus.Errorf(janus.ErrSessionConflict,
		"Session ID %d carries node slot %d; this node's is %d", id, cluster.SessionSlot(id), slot)
}

// newSessionID draws a free session id carrying slot (0: any id in [1, 2^53), as without a
// cluster). Called with g.mu held.
func (g *Gateway) newSessionID(slot int) uint64 {
	inUse := func(x uint64) bool { _, ok := g.sessions[x]; return ok }
	if slot == 0 {
		return newID(inUse)
	}
	const lowBits = 1 << (53 - cluster.SlotBits)
	for {
		// A non-zero slot makes every id non-zero; the low bits may be anything.
		id := cluster.WithSlot(rand.Uint64N(lowBits), slot)
		if !inUse(id) {
			return id
		}
	}
}
