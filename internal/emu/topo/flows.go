package topo

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/emu/netem"
	"github.com/strata-rtc/strata/internal/ring"
	"github.com/strata-rtc/strata/internal/sim"
)

// pairKey is a packet's (source, destination) IPv4 address pair.
type pairKey [8]byte

func keyOf(h netem.IPv4) (k pairKey) {
	copy(k[:4], h.Src[:])
	copy(k[4:], h.Dst[:])
	return k
}

// route is what a (source, destination) pair says about a packet: its flow
// and direction (0 data, 1 feedback or ACKs).
type route struct {
	flow *flowState
	dir  int
}

// direction is one direction of a flow: the links it crosses in order and,
// per hop after the first, the packets on their way to it.
type direction struct {
	links   []int
	pending []hopQueue // pending[j]: packets admitted at hop j-1, with their queueing so far
}

type flowState struct {
	spec     FlowSpec
	src, dst *Host
	dirs     [2]direction
	mu       sync.Mutex
	stats    *sim.FlowStats
	// unmatched counts packets a later hop could not find among those the
	// previous hop passed on (their earlier queueing is then not counted).
	unmatched int64
	// classes counts the data packets per DSCP (a fixed table: counting
	// allocates nothing).
	classes [64]classCount
}

// classCount is what happened to a flow's data packets of one DSCP.
type classCount struct{ arrived, dropped, delivered int64 }

// ClassCounts are a flow's data packets of one DSCP (the IP header's TOS
// byte >> 2): arrived at its first link, dropped by a link (its queue or its
// loss model), delivered by its last link. Packets a switch in front of the
// first link dropped never arrived (seed 000's per-layer loss is drops /
// arrivals of the layer's mark).
type ClassCounts struct {
	DSCP                        uint8
	Arrived, Dropped, Delivered int64
}

// classList lists the classes that saw packets, by DSCP.
func (f *flowState) classList() []ClassCounts {
	var out []ClassCounts
	for d, c := range f.classes {
		if c != (classCount{}) {
			out = append(out, ClassCounts{DSCP: uint8(d), Arrived: c.arrived, Dropped: c.dropped, Delivered: c.delivered})
		}
	}
	return out
}

func (n *Network) flowOrder() []*flowState {
	out := make([]*flowState, 0, len(n.spec.Flows))
	for _, f := range n.spec.Flows {
		out = append(out, n.flows[f.Name])
	}
	return out
}

// planFlows resolves every flow's paths into links and its address pairs.
func (n *Network) planFlows() error {
	bins := int(n.spec.Duration/n.spec.Interval) + 1
	for _, fs := range n.spec.Flows {
		if _, dup := n.flows[fs.Name]; dup || fs.Name == "" {
			return fmt.Errorf("topo: flow name %q empty or used twice", fs.Name)
		}
		src, dst := n.hosts[fs.Src], n.hosts[fs.Dst]
		if src == nil || dst == nil || src == dst {
			return fmt.Errorf("topo: flow %s: hosts %q and %q must be two different hosts of the spec", fs.Name, fs.Src, fs.Dst)
		}
		rev := fs.ReversePath
		if len(rev) == 0 {
			rev = slices.Clone(fs.Path)
			slices.Reverse(rev)
		}
		f := &flowState{spec: fs, src: src, dst: dst,
			stats: sim.NewFlowStats(fs.Name, fs.Kind, fs.CC, bins, n.spec.Interval)}
		for dir, path := range [][]string{fs.Path, rev} {
			from, to := src, dst
			if dir == 1 {
				from, to = dst, src
			}
			links, err := n.resolve(path, from.node, to.node)
			if err != nil {
				return fmt.Errorf("topo: flow %s: %w", fs.Name, err)
			}
			f.dirs[dir] = direction{links: links, pending: make([]hopQueue, len(links))}
			k := pairKey(append(from.addr.AsSlice(), to.addr.AsSlice()...))
			if other, dup := n.byPair[k]; dup {
				return fmt.Errorf("topo: flows %s and %s join the same two hosts; give each flow its own hosts", other.flow.spec.Name, fs.Name)
			}
			n.byPair[k] = route{flow: f, dir: dir}
		}
		n.flows[fs.Name] = f
	}
	return nil
}

// resolve turns a node path into the links joining consecutive nodes.
func (n *Network) resolve(path []string, from, to string) ([]int, error) {
	if len(path) < 2 || path[0] != from || path[len(path)-1] != to {
		return nil, fmt.Errorf("path %v must lead from node %s to node %s", path, from, to)
	}
	out := make([]int, 0, len(path)-1)
	for i := 0; i+1 < len(path); i++ {
		k := slices.IndexFunc(n.spec.Links, func(l sim.LinkConfig) bool { return l.From == path[i] && l.To == path[i+1] })
		if k < 0 {
			return nil, fmt.Errorf("no link from %s to %s", path[i], path[i+1])
		}
		out = append(out, k)
	}
	return out, nil
}

// FlowStats returns the named flow's network-side statistics so far (sent
// at its first link, delivered by its last, lost anywhere, queueing summed
// over its hops), or nil for an unknown flow (or, with Err set, a link
// process that is gone).
func (n *Network) FlowStats(name string) *sim.FlowStats {
	f := n.flows[name]
	if f == nil {
		return nil
	}
	r, err := n.proc.call(request{Op: "flow", Flow: name})
	if err != nil {
		return nil
	}
	w := r.Flow
	st := sim.NewFlowStats(name, f.spec.Kind, f.spec.CC, n.bins(), n.spec.Interval)
	st.SentPackets, st.SentBytes, st.RecvPackets, st.RecvBytes = w.SentPackets, w.SentBytes, w.RecvPackets, w.RecvBytes
	st.Dropped, st.ControlDropped, st.Marked = w.Dropped, w.ControlDropped, w.Marked
	st.QueueDelays = w.QueueDelays
	copy(st.BinSent, w.BinSent)
	copy(st.BinRecv, w.BinRecv)
	copy(st.BinQDelay, w.BinQDelay)
	copy(st.BinQN, w.BinQN)
	copy(st.BinLost, w.BinLost)
	return st
}

// FlowClasses returns the named flow's data packets per DSCP so far (the
// classes that saw packets, by DSCP), or nil for an unknown flow or a link
// process that is gone.
func (n *Network) FlowClasses(name string) []ClassCounts {
	if n.flows[name] == nil {
		return nil
	}
	r, err := n.proc.call(request{Op: "flow", Flow: name})
	if err != nil {
		return nil
	}
	return r.Flow.Classes
}

// localFlow is FlowStats in the link process.
func (n *Network) localFlow(name string) (flowWire, error) {
	f := n.flows[name]
	if f == nil {
		return flowWire{}, fmt.Errorf("no flow %q", name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	return flowWire{SentPackets: s.SentPackets, SentBytes: s.SentBytes, RecvPackets: s.RecvPackets, RecvBytes: s.RecvBytes,
		Dropped: s.Dropped, ControlDropped: s.ControlDropped, Marked: s.Marked, Unmatched: f.unmatched,
		QueueDelays: slices.Clone(s.QueueDelays), BinSent: slices.Clone(s.BinSent), BinRecv: slices.Clone(s.BinRecv),
		BinQDelay: slices.Clone(s.BinQDelay), BinQN: slices.Clone(s.BinQN), BinLost: slices.Clone(s.BinLost),
		Classes: f.classList()}, nil
}

// linkObserver classifies the packets crossing one link and keeps their
// flows' statistics.
type linkObserver struct {
	net  *Network
	link int
}

func (o *linkObserver) lookup(pkt []byte) (*flowState, int, int, bool) {
	f, dir, hop, _, ok := o.classify(pkt)
	return f, dir, hop, ok
}

// classify is lookup with the packet's DSCP.
func (o *linkObserver) classify(pkt []byte) (f *flowState, dir, hop int, dscp uint8, ok bool) {
	h, ok := netem.ParseIPv4(pkt)
	if !ok {
		return nil, 0, 0, 0, false
	}
	r, ok := o.net.byPair[keyOf(h)]
	if !ok {
		return nil, 0, 0, 0, false
	}
	hop = slices.Index(r.flow.dirs[r.dir].links, o.link)
	return r.flow, r.dir, hop, h.TOS >> 2, hop >= 0
}

// Admit counts a packet entering the link; the queueing it has met so far
// (from the previous hop), plus this hop's wait, rides with it to Deliver.
func (o *linkObserver) Admit(pkt []byte, now time.Duration, a sim.Admission) uint64 {
	f, dir, hop, dscp, ok := o.classify(pkt)
	if !ok {
		return 0
	}
	d := &f.dirs[dir]
	f.mu.Lock()
	defer f.mu.Unlock()
	var queued time.Duration
	if hop > 0 {
		var found bool
		if queued, found = d.pending[hop].take(netem.Hash(pkt)); !found {
			f.unmatched++
		}
	}
	st := f.stats
	bin := st.Bin(now)
	if dir == 0 && hop == 0 {
		f.classes[dscp].arrived++
		st.SentPackets++
		st.SentBytes += int64(len(pkt))
		st.BinSent[bin] += int64(len(pkt))
	}
	if a.Verdict != sim.Admitted {
		if dir == 0 {
			f.classes[dscp].dropped++
			st.Dropped++
			st.BinLost[bin]++
		} else {
			st.ControlDropped++
		}
		return 0
	}
	return uint64(queued + a.Wait)
}

// Deliver adds how late the emulator let the packet leave to its queueing
// (a busy machine's delay is delay the packet really met, and the end-to-end
// measurement sees it), then hands the sum to the next hop or, leaving the
// flow's last link, counts the data packet as delivered.
func (o *linkObserver) Deliver(pkt []byte, now, late time.Duration, tag uint64) {
	f, dir, hop, ok := o.lookup(pkt)
	if !ok {
		return
	}
	d := &f.dirs[dir]
	q := time.Duration(tag) + late
	if hop < len(d.links)-1 {
		sum := netem.Hash(pkt)
		f.mu.Lock()
		d.pending[hop+1].put(sum, q)
		f.mu.Unlock()
		return
	}
	if dir != 0 {
		return
	}
	h, _ := netem.ParseIPv4(pkt)
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.stats
	bin := st.Bin(now)
	st.RecvPackets++
	st.RecvBytes += int64(len(pkt))
	st.BinRecv[bin] += int64(len(pkt))
	st.BinQDelay[bin] += q
	st.BinQN[bin]++
	st.QueueDelays = append(st.QueueDelays, float32(q.Seconds()))
	f.classes[h.TOS>>2].delivered++
	if h.CE() {
		st.Marked++
	}
}

// hopQueue holds, in order, the packets one hop passed on to the next with
// their queueing so far. Links keep order, so the packet arriving at the next
// hop is the oldest entry unless the kernel lost some in between.
type hopQueue struct{ entries ring.Ring[hopEntry] }

type hopEntry struct {
	hash   uint64
	queued time.Duration
}

// search bounds how far take looks past entries lost between hops;
// maxPending bounds the entries kept for packets that never arrive.
const (
	search     = 64
	maxPending = 1 << 16
)

func (q *hopQueue) put(hash uint64, queued time.Duration) {
	if q.entries.Len() >= maxPending {
		q.entries.Pop()
	}
	q.entries.Push(hopEntry{hash, queued})
}

// take finds the packet with this hash among the oldest entries, forgets it
// and those ahead of it (lost between the hops), and returns its queueing.
func (q *hopQueue) take(hash uint64) (time.Duration, bool) {
	for i := range min(q.entries.Len(), search) {
		if e := *q.entries.At(i); e.hash == hash {
			q.entries.Discard(i + 1)
			return e.queued, true
		}
	}
	return 0, false
}
