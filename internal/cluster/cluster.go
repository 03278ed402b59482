// Package cluster runs strata as several nodes that behave as one (docs/CLUSTER.md).
//
// A distributed engine (Redis: internal/cluster/redisengine) holds only what must be shared: a
// record per node that lapses unless refreshed, a slot per node that session ids carry, one owner
// per room as a lease with a fencing epoch, and a few shared values (feed descriptors). Events
// between nodes go over the engine's publish/subscribe, each with its sender's epoch and a sequence
// number so that a node that missed messages notices and resynchronises. Requests between nodes
// (media relay signalling, a room's owner's decisions) go over HTTP to the other node's cluster
// listener. Media between nodes goes over one ICE + DTLS-SRTP transport per node pair
// (internal/cluster/relay).
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// MaxSlot is the largest node slot: session ids carry the slot in SlotBits bits.
const (
	SlotBits = 6
	MaxSlot  = 1<<SlotBits - 1
)

// NodeState says whether a node takes new sessions.
type NodeState string

// Node states.
const (
	Serving  NodeState = "serving"
	Draining NodeState = "draining"
)

// NodeRecord is a node as the others see it.
type NodeRecord struct {
	ID   string `json:"id"`
	Slot int    `json:"slot"`
	// API and WS are the node's Janus API base URLs (http://host:port/janus, ws://host:port), where
	// another node proxies requests for the sessions this node holds.
	API string `json:"api"`
	WS  string `json:"ws"`
	// Internal is the base URL of the node's cluster listener (node-to-node requests).
	Internal string    `json:"internal"`
	State    NodeState `json:"state"`
	Load     Load      `json:"load"`
	Started  time.Time `json:"started"`
}

// Load is what a node reports of its work, for placement and the admin API.
type Load struct {
	Sessions        int `json:"sessions"`
	PeerConnections int `json:"peerconnections"`
	// MaxSessions is the node's limit (0: none); a node at its limit refuses create.
	MaxSessions int `json:"max_sessions"`
	Relays      int `json:"relays"`
	// Rooms is how many rooms (leases: videoroom and audiobridge rooms) this node owns.
	Rooms int `json:"rooms"`
}

// Full reports whether the node takes no more sessions.
func (r NodeRecord) Full() bool {
	return r.State == Draining || r.Load.MaxSessions > 0 && r.Load.Sessions >= r.Load.MaxSessions
}

// Lease is a held name (a room's ownership) with its fencing epoch: every holder of the name has a
// larger epoch than the one before it, even across an engine restart that forgot the name.
type Lease struct {
	Name   string `json:"name"`
	Holder string `json:"holder"`
	Epoch  uint64 `json:"epoch"`
}

// Message is one message received on a channel of the engine.
type Message struct {
	Channel string
	Payload []byte
}

// Subscription delivers the messages of the channels it was made for. The engine re-subscribes
// after a lost connection; messages published meanwhile are lost, which Reconnected says.
type Subscription interface {
	Messages() <-chan Message
	// Reconnected receives a value after the subscription was re-established: what was published
	// in between is lost, and the subscriber resynchronises.
	Reconnected() <-chan struct{}
	// Add and Remove change the channels listened on: one subscription (one connection) serves
	// every topic a node follows.
	Add(ctx context.Context, channels ...string) error
	Remove(ctx context.Context, channels ...string) error
	Close() error
}

// Engine is the distributed engine: the only thing that talks to Redis (or whatever replaces it).
// Every call takes a context; an unreachable engine returns an error wrapping ErrUnavailable.
type Engine interface {
	// PutNode writes the node's record, which lapses after ttl unless written again.
	PutNode(ctx context.Context, rec NodeRecord, ttl time.Duration) error
	DeleteNode(ctx context.Context, id string) error
	Nodes(ctx context.Context) ([]NodeRecord, error)

	// ClaimSlot gives node a slot in [1, MaxSlot] held for ttl: the one it held, if it is still
	// its own, or a free one. RenewSlot extends it and fails if another node took it.
	ClaimSlot(ctx context.Context, node string, ttl time.Duration) (int, error)
	RenewSlot(ctx context.Context, node string, slot int, ttl time.Duration) error
	// ReleaseSlot frees node's slot (a node that stops cleanly) if it still holds it.
	ReleaseSlot(ctx context.Context, node string, slot int) error

	// Acquire takes the lease on name for holder when nobody holds it, at an epoch above both the
	// last one the engine knows and minEpoch (a restarted engine forgets epochs; the nodes do not).
	// It returns the current lease and whether holder now holds it.
	Acquire(ctx context.Context, name, holder string, minEpoch uint64, ttl time.Duration) (Lease, bool, error)
	// Renew extends a lease still held at its epoch; false once it was lost.
	Renew(ctx context.Context, l Lease, ttl time.Duration) (bool, error)
	// Release gives a lease up if still held at its epoch.
	Release(ctx context.Context, l Lease) error
	// Holder returns the current lease of name, if any.
	Holder(ctx context.Context, name string) (Lease, bool, error)

	// Put, Get and Delete keep shared values; a ttl of 0 keeps the value until deleted.
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Delete(ctx context.Context, key string) error

	Publish(ctx context.Context, channel string, payload []byte) error
	Subscribe(ctx context.Context, channels ...string) (Subscription, error)

	Ping(ctx context.Context) error
	Close() error
}

// ErrUnavailable wraps every error of an engine that cannot be reached.
var ErrUnavailable = errors.New("cluster: engine unavailable")

// Envelope is an event between nodes on a topic: its sender, the sender's epoch for the topic (a
// room owner's lease epoch; 0 for events that need no fencing) and the sender's sequence number on
// the topic, which grows by one per event so that a gap shows a lost message.
type Envelope struct {
	Topic string          `json:"topic"`
	From  string          `json:"from"`
	Epoch uint64          `json:"epoch"`
	Seq   uint64          `json:"seq"`
	Kind  string          `json:"kind"`
	Body  json.RawMessage `json:"body,omitempty"`
}
