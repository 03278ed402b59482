package cluster

import (
	"context"
	"encoding/json"
)

// View is what the rest of strata sees of the cluster: the transports (which node holds a
// session), the plugins (rooms that span nodes) and the admin API. *Node implements it; a server
// without a cluster has none (nil), and every caller treats nil as "one node".
type View interface {
	// Self is this node's record as last written.
	Self() NodeRecord
	// Node returns a live node's record by id, or by the slot a session id carries.
	Node(id string) (NodeRecord, bool)
	NodeBySlot(slot int) (NodeRecord, bool)
	// Nodes are the live nodes, this one included, ordered by id.
	Nodes() []NodeRecord
	// Watch calls f for every change of the membership (a node appeared, changed state, or its
	// record lapsed: it is gone, and everything it held goes with it) until cancel is called. f runs
	// on the membership's goroutine and must not block.
	Watch(f func(NodeEvent)) (cancel func())

	// Topic returns the ordered event channel named name (e.g. "videoroom/1234").
	Topic(name string) Topic
	// Owner follows the lease on name (a room): it acquires it when nobody holds it and acquire is
	// true, renews it while held, and reports every change of holder.
	Owner(name string, acquire bool) Ownership

	// Call sends req to node's cluster listener at path and decodes the answer into resp.
	Call(ctx context.Context, node, path string, req, resp any) error
	// Handle serves path on this node's cluster listener (node-to-node requests, authenticated
	// with the cluster's secret): f gets the calling node's id and the request body.
	Handle(path string, f func(ctx context.Context, from string, req json.RawMessage) (any, error))
	// Connected reports whether the engine answers: a node cut off from it stops acting as owner
	// of anything and refuses new sessions until it is back.
	Connected() bool
}

// NodeEventKind says what happened to a node.
type NodeEventKind int

// Node events.
const (
	NodeUp NodeEventKind = iota
	NodeChanged
	NodeGone
)

// NodeEvent is one change of the membership.
type NodeEvent struct {
	Kind NodeEventKind
	Node NodeRecord
}

// Topic is an ordered channel of events between nodes: Publish stamps each event with this node
// as sender, the given epoch and the next sequence number; Subscribe delivers events in order per
// sender and reports a gap (a lost message, or the engine reconnected) with Gap, after which the
// subscriber resynchronises from the topic's owner.
type Topic interface {
	Publish(ctx context.Context, kind string, epoch uint64, body any) error
	Subscribe(f func(Envelope), gap func(from string)) (cancel func())
}

// Ownership follows one lease.
type Ownership interface {
	// Current is the lease as last seen, and whether this node holds it.
	Current() (Lease, bool)
	// OnChange calls f whenever the holder or epoch changes (f must not block).
	OnChange(f func(l Lease, mine bool))
	// Release gives the lease up (drain) and stops following it.
	Release(ctx context.Context) error
}

// Proxy is what the Janus API transports need: which node holds a session, and whether this node
// takes new ones.
type Proxy interface {
	// Locate returns the node that holds sessionID, false when it is this node's (or no live node
	// has its slot).
	Locate(sessionID uint64) (NodeRecord, bool)
	// Accepting reports whether this node takes a new session; false with the reason when it is
	// draining, full or cut off from the engine.
	Accepting() (bool, string)
}

// SessionSlot returns the node slot a session id carries (0: none, an id of a server without a
// cluster). Ids stay below 2^53 (JavaScript numbers): the slot takes the top SlotBits of those.
func SessionSlot(id uint64) int { return int(id >> (53 - SlotBits) & MaxSlot) }

// WithSlot returns id's low bits under slot: a session id this node can issue.
func WithSlot(id uint64, slot int) uint64 {
	const low = 1<<(53-SlotBits) - 1
	return uint64(slot)<<(53-SlotBits) | id&low
}
