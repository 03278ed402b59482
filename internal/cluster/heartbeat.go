package cluster

import (
	"context"
	"errors"
	"time"
)

// loop heartbeats every cfg.Heartbeat until Stop.
func (n *Node) loop() {
	defer close(n.loopDone)
	t := time.NewTicker(n.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			n.beat()
		}
	}
}

// beat reads the membership, renews the slot, writes the record and follows the leases. Each
// request is bounded by the engine's own (short) timeout; the beat as a whole by node_ttl, past
// which it could not keep the record alive anyway. A beat that overruns its period only delays
// the next one.
func (n *Node) beat() {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.NodeTTL)
	defer cancel()
	// The membership is read before this node's record is written: finding that record missing
	// tells a restarted (or flushed) engine, which lost the others' records too (lostRecords).
	recs, rerr := n.eng.Nodes(ctx)
	err := n.writeSelf(ctx)
	if err == nil {
		err = rerr
	}
	if err == nil {
		n.applyMembers(recs)
	}
	if err == nil {
		n.lastOK.Store(time.Now().UnixNano())
	}
	n.noteConnection(err)
	// Each lease request is bounded by the engine's timeout; the leases get their own time rather
	// than what the beat left, so that many rooms do not starve the last ones.
	for _, o := range n.ownerList() {
		o.tick(context.Background(), err == nil)
	}
}

// writeSelf renews the slot and writes the record. A restarted engine forgot both: RenewSlot
// takes the slot again (it is free) and the record is written whole each time.
func (n *Node) writeSelf(ctx context.Context) error {
	n.mu.Lock()
	n.self.Load = n.currentLoad()
	rec := n.self
	n.mu.Unlock()
	if err := n.eng.RenewSlot(ctx, rec.ID, rec.Slot, n.cfg.NodeTTL); err != nil {
		if errors.Is(err, ErrUnavailable) {
			return err
		}
		// Another node took the slot while this one was cut off (its slot lapsed). Session ids
		// carry the slot, so the node keeps it and says so loudly: the operator has two nodes
		// answering for one slot until one of them restarts.
		n.log.Error("cluster: this node's slot is held by another node", "slot", rec.Slot, "error", err)
	}
	return n.eng.PutNode(ctx, rec, n.cfg.NodeTTL)
}

func (n *Node) noteConnection(err error) {
	now := n.Connected()
	if was := n.connected.Swap(now); was != now {
		if now {
			n.log.Info("cluster: engine reachable again")
		} else {
			n.log.Error("cluster: cut off from the engine: not owning anything, refusing sessions", "error", err)
		}
	}
}

func (n *Node) ownerList() []*ownership {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ownersLocked()
}

// readMembers reads the live records and tells the watchers what changed.
func (n *Node) readMembers(ctx context.Context) {
	if recs, err := n.eng.Nodes(ctx); err == nil {
		n.applyMembers(recs)
	}
}

// refreshMinGap bounds how often a miss (a session id or a node the membership does not know)
// reads the membership between heartbeats: requests with made-up session ids must not turn into
// one engine request each.
const refreshMinGap = 100 * time.Millisecond

// refreshMembers reads the membership now, unless it was read less than refreshMinGap ago: a
// node that joined after the last heartbeat is known at once rather than up to a heartbeat later.
func (n *Node) refreshMembers(ctx context.Context) {
	now := time.Now().UnixNano()
	last := n.lastRefresh.Load()
	if now-last < int64(refreshMinGap) || !n.lastRefresh.CompareAndSwap(last, now) {
		return
	}
	n.readMembers(ctx)
}

// applyMembers tells the watchers what changed. A node whose record lapsed or was deleted is
// gone; one that came back with another start time restarted (it lost what it held), so it is
// gone and up again. When this node's own record was missing too, the engine lost the records
// (a restart): the nodes missing then are not gone unless still missing one node_ttl later,
// which leaves them the time to write their records again.
func (n *Node) applyMembers(recs []NodeRecord) {
	now := make(map[string]NodeRecord, len(recs))
	self := false
	for _, r := range recs {
		if r.ID != n.cfg.NodeID {
			now[r.ID] = r
			continue
		}
		self = true
		if started := n.Self().Started; !r.Started.Equal(started) {
			// Another process wrote a record under this node's id since this one's last write:
			// two nodes configured with one node_id, which the others see as one node
			// restarting again and again.
			n.log.Error("cluster: another node runs with this node id", "its_start", r.Started, "this_start", started)
		}
	}
	at := time.Now()
	var events []NodeEvent
	n.mu.Lock()
	if !self {
		n.lostRecords = at.Add(n.cfg.NodeTTL)
	}
	for id, old := range n.members {
		r, ok := now[id]
		switch {
		case !ok && at.Before(n.lostRecords):
			now[id] = old // not lapsed: lost with the engine's records; it writes its record again
		case !ok:
			events = append(events, NodeEvent{Kind: NodeGone, Node: old})
		case !r.Started.Equal(old.Started):
			events = append(events, NodeEvent{Kind: NodeGone, Node: old}, NodeEvent{Kind: NodeUp, Node: r})
		case changed(old, r):
			events = append(events, NodeEvent{Kind: NodeChanged, Node: r})
		}
	}
	for id, r := range now {
		if _, ok := n.members[id]; !ok {
			events = append(events, NodeEvent{Kind: NodeUp, Node: r})
		}
	}
	n.members = now
	watchers := make([]func(NodeEvent), 0, len(n.watchers))
	for _, f := range n.watchers {
		watchers = append(watchers, f)
	}
	n.mu.Unlock()
	for _, ev := range events {
		for _, f := range watchers {
			f(ev)
		}
	}
}

// changed reports a change the watchers care about: state, slot or addresses. Load changes every
// second and is read from Nodes when needed.
func changed(a, b NodeRecord) bool {
	return a.State != b.State || a.Slot != b.Slot || a.API != b.API || a.WS != b.WS || a.Internal != b.Internal
}
