package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/logagg"
)

// Config is what a Node needs of the `cluster:` configuration block.
type Config struct {
	// NodeID is unique in the cluster.
	NodeID string
	// API, WS and Internal are the URLs the other nodes use for this one (NodeRecord).
	API, WS, Internal string
	// Secret authenticates node-to-node requests (the bearer of Call, checked by Handler).
	Secret string
	// Heartbeat is how often the node writes its record, renews its slot and leases, and reads
	// the membership; NodeTTL is how long its record lives without a heartbeat (a node whose
	// record lapsed is gone), LeaseTTL how long a lease lives without renewal.
	Heartbeat, NodeTTL, LeaseTTL time.Duration
	// MaxSessions is the node's limit on sessions (0: none).
	MaxSessions int
}

func (c Config) validate() error {
	switch {
	case c.NodeID == "":
		return errors.New("cluster: node id is empty")
	case c.Heartbeat <= 0:
		return errors.New("cluster: heartbeat must be positive")
	case c.NodeTTL <= c.Heartbeat:
		return fmt.Errorf("cluster: node_ttl %v must exceed the heartbeat %v", c.NodeTTL, c.Heartbeat)
	case c.LeaseTTL <= c.Heartbeat:
		return fmt.Errorf("cluster: lease_ttl %v must exceed the heartbeat %v", c.LeaseTTL, c.Heartbeat)
	}
	return nil
}

// Option configures a Node.
type Option func(*Node)

// WithLoad gives the node what it reports of its work in its record (sessions, PeerConnections,
// relays), read once per heartbeat.
func WithLoad(f func() Load) Option { return func(n *Node) { n.load = f } }

// WithLogger sets the node's logger.
func WithLogger(l *slog.Logger) Option { return func(n *Node) { n.log = l } }

// WithHTTPClient sets the client of Call (its transport, say; Call bounds each request itself).
func WithHTTPClient(c *http.Client) Option { return func(n *Node) { n.client = c } }

// Node is this strata node in the cluster: it keeps its record and slot alive in the engine,
// follows the membership, and implements View and Proxy.
type Node struct {
	cfg    Config
	eng    Engine
	log    *slog.Logger
	load   func() Load
	client *http.Client

	// badInput writes a malformed message's line once per window per topic: any node (or anyone
	// with access to Redis) can publish on the channels.
	badInput *logagg.Aggregator[string, string]

	mu      sync.Mutex
	self    NodeRecord
	members map[string]NodeRecord // the other live nodes, as last read
	// lostRecords: until then, a node missing from the records is not gone (applyMembers).
	lostRecords time.Time
	watchers    map[int]func(NodeEvent)
	nextID      int
	owners      map[*ownership]struct{}
	handlers    map[string]HandlerFunc
	seqs        map[string]*topicSeq // this node's sequence numbers, per topic
	draining    bool
	stopped     bool

	// lastOK is when (unix nanoseconds) a heartbeat last reached the engine entirely.
	lastOK atomic.Int64
	// lastRefresh is when (unix nanoseconds) a miss last read the membership (refreshMembers).
	lastRefresh atomic.Int64
	connected   atomic.Bool // as of the last heartbeat, for the transition's log line and callbacks

	gaps, malformed, leasesHeld atomic.Int64

	stop     chan struct{}
	loopDone chan struct{}
	hub      *hub           // the one subscription to the engine, for every topic
	subs     sync.WaitGroup // the hub's and the topic subscribers' goroutines
	// subsMu guards subsClosed, set by Stop before it waits for subs: no goroutine is counted after.
	subsMu     sync.Mutex
	subsClosed bool
}

var (
	_ View  = (*Node)(nil)
	_ Proxy = (*Node)(nil)
)

// New joins the cluster: it claims a slot and writes the node's record, then heartbeats until
// Stop. It fails when the engine cannot give it a slot (unreachable, or every slot taken): the
// slot is in every session id the node issues, so it cannot serve without one.
func New(cfg Config, eng Engine, opts ...Option) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{
		cfg: cfg, eng: eng, log: slog.Default(), load: func() Load { return Load{} },
		client:   &http.Client{},
		members:  make(map[string]NodeRecord),
		watchers: make(map[int]func(NodeEvent)),
		owners:   make(map[*ownership]struct{}),
		handlers: make(map[string]HandlerFunc),
		seqs:     make(map[string]*topicSeq),
		stop:     make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	n.hub = newHub(n)
	for _, o := range opts {
		o(n)
	}
	n.log = n.log.With("component", "cluster", "node", cfg.NodeID)
	n.badInput = logagg.New(logagg.DefaultWindow, nil, "(other topics)",
		func(topic, firstErr string, count int, window time.Duration) {
			n.log.Warn(logagg.Repeated("cluster: malformed messages dropped", count, window),
				"topic", topic, "first_error", firstErr)
		})
	ctx, cancel := context.WithTimeout(context.Background(), cfg.NodeTTL)
	defer cancel()
	slot, err := eng.ClaimSlot(ctx, cfg.NodeID, cfg.NodeTTL)
	if err != nil {
		return nil, fmt.Errorf("cluster: node %s: claim a slot: %w", cfg.NodeID, err)
	}
	n.self = NodeRecord{ID: cfg.NodeID, Slot: slot, API: cfg.API, WS: cfg.WS, Internal: cfg.Internal,
		State: Serving, Started: time.Now().UTC().Truncate(time.Millisecond)}
	n.self.Load = n.currentLoad()
	if err := eng.PutNode(ctx, n.self, cfg.NodeTTL); err != nil {
		_ = eng.ReleaseSlot(ctx, cfg.NodeID, slot)
		return nil, fmt.Errorf("cluster: node %s: write its record: %w", cfg.NodeID, err)
	}
	n.lastOK.Store(time.Now().UnixNano())
	n.connected.Store(true)
	n.readMembers(ctx)
	n.log.Info("cluster: joined", "slot", slot)
	go n.loop()
	return n, nil
}

func (n *Node) currentLoad() Load {
	l := n.load()
	l.MaxSessions = n.cfg.MaxSessions
	l.Rooms = int(n.leasesHeld.Load())
	return l
}

// Self is this node's record as last written.
func (n *Node) Self() NodeRecord {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.self
}

// Node returns a live node's record (this one's included).
func (n *Node) Node(id string) (NodeRecord, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if id == n.self.ID {
		return n.self, true
	}
	r, ok := n.members[id]
	return r, ok
}

// NodeBySlot returns the live node holding slot.
func (n *Node) NodeBySlot(slot int) (NodeRecord, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if slot == n.self.Slot {
		return n.self, true
	}
	for _, r := range n.members {
		if r.Slot == slot {
			return r, true
		}
	}
	return NodeRecord{}, false
}

// Nodes are the live nodes, this one included, ordered by id.
func (n *Node) Nodes() []NodeRecord {
	n.mu.Lock()
	out := make([]NodeRecord, 0, len(n.members)+1)
	out = append(out, n.self)
	for _, r := range n.members {
		out = append(out, r)
	}
	n.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Watch calls f for every change of the other nodes' membership until cancel is called.
func (n *Node) Watch(f func(NodeEvent)) (cancel func()) {
	n.mu.Lock()
	id := n.nextID
	n.nextID++
	n.watchers[id] = f
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		delete(n.watchers, id)
		n.mu.Unlock()
	}
}

// Connected reports whether the engine answered within the last node_ttl: beyond that the other
// nodes consider this one gone, so it must not act as owner of anything either.
func (n *Node) Connected() bool {
	return time.Since(time.Unix(0, n.lastOK.Load())) <= n.cfg.NodeTTL
}

// Locate returns the node that holds sessionID: false when it is this node's or no live node
// has the slot the id carries.
func (n *Node) Locate(sessionID uint64) (NodeRecord, bool) {
	slot := SessionSlot(sessionID)
	if slot == 0 {
		return NodeRecord{}, false
	}
	r, ok := n.NodeBySlot(slot)
	if !ok {
		// A session of a node that joined since the last heartbeat: read the membership now.
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
		n.refreshMembers(ctx)
		cancel()
		r, ok = n.NodeBySlot(slot)
	}
	if !ok || r.ID == n.cfg.NodeID {
		return NodeRecord{}, false
	}
	return r, true
}

// Accepting reports whether this node takes a new session, and why not.
func (n *Node) Accepting() (bool, string) {
	if !n.Connected() {
		return false, "node cut off from the cluster engine"
	}
	n.mu.Lock()
	draining := n.draining
	n.mu.Unlock()
	if draining {
		return false, "node draining"
	}
	if max := n.cfg.MaxSessions; max > 0 && n.load().Sessions >= max {
		return false, fmt.Sprintf("node full (%d sessions)", max)
	}
	return true, ""
}

// Stats are the node's counters for the metrics.
type Stats struct {
	Nodes      int  // live nodes, this one included
	Connected  bool // Connected()
	LeasesHeld int
	// TopicGaps counts gaps reported to topic subscribers; Malformed the messages dropped as
	// malformed.
	TopicGaps, Malformed int64
}

// Stats returns the node's counters.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	nodes := len(n.members) + 1
	n.mu.Unlock()
	return Stats{Nodes: nodes, Connected: n.Connected(), LeasesHeld: int(n.leasesHeld.Load()),
		TopicGaps: n.gaps.Load(), Malformed: n.malformed.Load()}
}

// Drain stops new sessions and hands every lease this node holds over: its record says
// Draining at once and the leases are released, so that the other nodes take the rooms.
func (n *Node) Drain(ctx context.Context) error {
	n.mu.Lock()
	n.draining = true
	n.self.State = Draining
	rec := n.self
	owners := n.ownersLocked()
	n.mu.Unlock()
	err := n.eng.PutNode(ctx, rec, n.cfg.NodeTTL)
	for _, o := range owners {
		if rerr := o.giveUp(ctx); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("cluster: node %s: drain: %w", n.cfg.NodeID, err)
	}
	n.log.Info("cluster: draining", "leases_released", len(owners))
	return nil
}

// Draining reports whether Drain was called.
func (n *Node) Draining() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.draining
}

// Stop leaves the cluster: the heartbeat and the topic subscribers end, held leases are
// released, and the record and slot are deleted so that the others see the node gone at once.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return nil
	}
	n.stopped = true
	n.draining = true
	owners := n.ownersLocked()
	slot := n.self.Slot
	n.mu.Unlock()
	close(n.stop)
	<-n.loopDone
	n.subsMu.Lock()
	n.subsClosed = true
	n.subsMu.Unlock()
	n.subs.Wait()
	var errs []error
	for _, o := range owners {
		errs = append(errs, o.giveUp(ctx))
	}
	errs = append(errs, n.eng.DeleteNode(ctx, n.cfg.NodeID), n.eng.ReleaseSlot(ctx, n.cfg.NodeID, slot))
	n.badInput.Drain()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster: node %s: stop: %w", n.cfg.NodeID, err)
	}
	return nil
}

// halt ends the heartbeat without deleting anything (tests: a node that crashed).
func (n *Node) halt() {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	n.stopped = true
	n.mu.Unlock()
	close(n.stop)
	<-n.loopDone
	n.subsMu.Lock()
	n.subsClosed = true
	n.subsMu.Unlock()
	n.subs.Wait()
}

func (n *Node) ownersLocked() []*ownership {
	out := make([]*ownership, 0, len(n.owners))
	for o := range n.owners {
		out = append(out, o)
	}
	return out
}
