package cluster

import (
	"context"
	"sync"
	"time"
)

// ownership follows one lease (Owner). Its tick runs on the heartbeat: the holder renews, the
// others read who holds it and, when asked to acquire, take it once it is free.
//
// Who takes a free lease: the node that held it last takes it back at once (a restarted engine
// forgot every lease; the old owner keeps its rooms), any other node only after seeing it free on
// two heartbeats in a row, which leaves the old holder one heartbeat to reclaim it first.
type ownership struct {
	n       *Node
	name    string
	acquire bool

	mu       sync.Mutex // one tick at a time
	notifyMu sync.Mutex // the callbacks of one change run before those of the next
	pending  []Lease    // changes to report, with pendMine
	pendMine []bool
	state    ownState
	seenFree bool // the lease was free at the last look
	maxEpoch uint64
	changeFs []func(Lease, bool)
	released bool
}

type ownState struct {
	lease Lease
	mine  bool
	// until is when a lease of ours stops counting as ours without a successful renewal: the
	// time the last renewal was sent plus lease_ttl. Past it another node may hold it.
	until time.Time
}

// Owner follows the lease on name; with acquire it takes the lease whenever nobody holds it
// (not while this node drains).
func (n *Node) Owner(name string, acquire bool) Ownership {
	o := &ownership{n: n, name: name, acquire: acquire}
	n.mu.Lock()
	n.owners[o] = struct{}{}
	n.mu.Unlock()
	// The first look is now, not at the next heartbeat: a room being created wants its owner.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.NodeTTL)
		defer cancel()
		o.mu.Lock()
		o.seenFree = true
		o.mu.Unlock()
		o.tick(ctx, n.Connected())
	}()
	return o
}

// Current is the lease as last seen, and whether this node holds it now.
func (o *ownership) Current() (Lease, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.state.lease, o.mineNow(time.Now())
}

func (o *ownership) mineNow(now time.Time) bool {
	return o.state.mine && now.Before(o.state.until) && o.n.Connected()
}

// OnChange calls f whenever the holder or epoch changes, or this node stops holding it; f is
// called at once with the lease as known if there is one.
func (o *ownership) OnChange(f func(l Lease, mine bool)) {
	o.mu.Lock()
	o.changeFs = append(o.changeFs, f)
	l, mine := o.state.lease, o.mineNow(time.Now())
	o.mu.Unlock()
	if l.Holder != "" {
		f(l, mine)
	}
}

// Release gives the lease up if held and stops following it.
func (o *ownership) Release(ctx context.Context) error {
	o.n.mu.Lock()
	delete(o.n.owners, o)
	o.n.mu.Unlock()
	o.mu.Lock()
	o.released = true
	o.mu.Unlock()
	return o.giveUp(ctx)
}

// giveUp releases the lease if this node holds it (Drain, Release, Stop).
func (o *ownership) giveUp(ctx context.Context) error {
	o.mu.Lock()
	defer o.unlock()
	if !o.state.mine {
		return nil
	}
	err := o.n.eng.Release(ctx, o.state.lease)
	o.setLocked(ownState{lease: Lease{Name: o.name}})
	return err
}

// tick renews or follows the lease; reachable says whether this heartbeat reached the engine
// (when it did not, only the local expiry of a held lease is checked).
func (o *ownership) tick(ctx context.Context, reachable bool) {
	o.mu.Lock()
	defer o.unlock()
	if o.released {
		return
	}
	now := time.Now()
	if !reachable {
		if o.state.mine && !o.mineNow(now) {
			o.setLocked(ownState{lease: o.state.lease})
		}
		return
	}
	if o.state.mine {
		ok, err := o.n.eng.Renew(ctx, o.state.lease, o.n.cfg.LeaseTTL)
		switch {
		case err == nil && ok:
			o.state.until = now.Add(o.n.cfg.LeaseTTL)
			return
		case err != nil:
			if !o.mineNow(time.Now()) {
				o.setLocked(ownState{lease: o.state.lease})
			}
			return
		}
		// Lost: it lapsed (and maybe another node took it) or the engine restarted. Look again
		// below, as the last holder.
		o.setLocked(ownState{lease: o.state.lease})
		o.seenFree = true
	}
	cur, held, err := o.n.eng.Holder(ctx, o.name)
	if err != nil {
		return
	}
	if held {
		o.seenFree = false
		o.noteEpoch(cur.Epoch)
		next := ownState{lease: cur}
		// Ours in the engine but not here (this node was cut off past its lease and is back
		// before the lease lapsed): it is ours again only once renewed.
		if cur.Holder == o.n.cfg.NodeID {
			if ok, err := o.n.eng.Renew(ctx, cur, o.n.cfg.LeaseTTL); err == nil && ok {
				next.mine, next.until = true, now.Add(o.n.cfg.LeaseTTL)
			}
		}
		if next.lease != o.state.lease || next.mine != o.state.mine {
			o.setLocked(next)
		}
		return
	}
	wasLast := o.state.lease.Holder == o.n.cfg.NodeID
	if o.state.lease.Holder != "" {
		o.setLocked(ownState{lease: Lease{Name: o.name}})
	}
	if !o.acquire || o.n.Draining() || !o.n.Connected() {
		return
	}
	if !wasLast && !o.seenFree {
		o.seenFree = true
		return
	}
	l, ok, err := o.n.eng.Acquire(ctx, o.name, o.n.cfg.NodeID, o.maxEpoch, o.n.cfg.LeaseTTL)
	if err != nil {
		return
	}
	o.seenFree = false
	o.noteEpoch(l.Epoch)
	o.setLocked(ownState{lease: l, mine: ok && l.Holder == o.n.cfg.NodeID, until: now.Add(o.n.cfg.LeaseTTL)})
}

func (o *ownership) noteEpoch(e uint64) {
	if e > o.maxEpoch {
		o.maxEpoch = e
	}
}

// unlock releases o.mu and then runs the callbacks of the changes made meanwhile, in order: they
// may read Current but must not block (nor call Release, whose own changes wait for them).
func (o *ownership) unlock() {
	ls, ms := o.pending, o.pendMine
	o.pending, o.pendMine = nil, nil
	fs := o.changeFs
	o.notifyMu.Lock()
	o.mu.Unlock()
	defer o.notifyMu.Unlock()
	for i, l := range ls {
		for _, f := range fs {
			f(l, ms[i])
		}
	}
}

// setLocked installs s and queues the OnChange callbacks when the holder, epoch or mine changed.
func (o *ownership) setLocked(s ownState) {
	prev := o.state
	o.state = s
	if prev.mine != s.mine {
		if s.mine {
			o.n.leasesHeld.Add(1)
		} else {
			o.n.leasesHeld.Add(-1)
		}
	}
	if prev.lease == s.lease && prev.mine == s.mine {
		return
	}
	o.pending = append(o.pending, s.lease)
	o.pendMine = append(o.pendMine, s.mine)
}
