// Package topo builds an emulated network for one scenario run: a network
// namespace per scenario node, a leaf namespace per endpoint host joined to
// its node by a plain veth, a veth between every two nodes a link joins, and
// per link a TUN in the link's source node through which policy routing sends
// the link's packets to a netem.Link. Nothing is created in the root
// namespace: browsers running beside treat any change there as a network
// change and abort their page loads.
//
// Packets follow each flow's path and reverse path by rules on the (source,
// destination) address pair, so the same pair classifies a packet into its
// flow and direction; the network side of each flow's statistics (sent,
// delivered, lost, marked, queueing delay summed over the hops) comes from
// the links.
package topo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/emu/netem"
	"github.com/strata-rtc/strata/internal/sim"
)

// HostSpec is an endpoint host hanging off a scenario node.
type HostSpec struct{ Name, Node string }

// FlowSpec is a flow between two hosts: its data crosses the links joining
// Path's nodes, its feedback or ACKs those joining ReversePath's (Path
// reversed when empty). No two flows may share a (Src, Dst) pair.
type FlowSpec struct {
	Name, Src, Dst    string
	Kind, CC          string // copied into the flow's statistics
	Path, ReversePath []string
}

// Spec is what Build builds.
type Spec struct {
	Links []sim.LinkConfig
	// Switched names the links with an Open vSwitch at their source end (switch.go).
	Switched           []string
	Hosts              []HostSpec
	Flows              []FlowSpec
	Interval, Duration time.Duration // statistics bins
	Seed               uint64        // loss and jitter, per link as in the simulator
}

// Network is a built emulated network.
type Network struct {
	spec      Spec
	pid       int
	seq       int64 // this network's number within the process
	nodes     map[string]*node
	nodeOrder []string
	hosts     map[string]*Host
	proc      *linkProcess  // the links' own process (see child.go)
	links     []*netem.Link // in the link process only
	obs       []*linkObserver
	switched  map[int]*switchNode // by link index
	switches  []*switchNode
	// switchThread runs functions on the OS thread the switches' daemons were started from (a
	// restarted daemon must be its child too); closed by Close, it releases the thread.
	switchThread chan func()
	flows        map[string]*flowState
	byPair       map[pairKey]route
	namespace    []string // every namespace made, for Close
	closeOnce    sync.Once
	closeErr     error
}

type node struct {
	name, ns string
	idx      int
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// networks counts the networks this process built, so that runs side by side in one process
// (`strata lab run --jobs 2`) name their namespaces apart.
var networks atomic.Int64

// nsFor names a namespace after this process, the network and the object, readable in
// `ip netns list` and unique between runs side by side.
func (n *Network) nsFor(kind string, i int, name string) string {
	s := unsafeChars.ReplaceAllString(name, "_")
	if len(s) > 24 {
		s = s[:24]
	}
	return fmt.Sprintf("%s%d-%d-%s%d-%s", prefix, n.pid, n.seq, kind, i, s)
}

// Build creates the network. On error everything made so far is removed and
// the error names the step that failed.
func Build(ctx context.Context, spec Spec) (*Network, error) {
	if err := checkRoot(); err != nil {
		return nil, err
	}
	if spec.Interval <= 0 {
		spec.Interval = 100 * time.Millisecond
	}
	n := &Network{spec: spec, pid: os.Getpid(), seq: networks.Add(1), nodes: map[string]*node{}, hosts: map[string]*Host{},
		flows: map[string]*flowState{}, byPair: map[pairKey]route{}}
	if err := n.plan(); err != nil {
		return nil, err
	}
	if err := n.build(ctx); err != nil {
		return nil, errors.Join(err, n.Close())
	}
	return n, nil
}

// plan checks the spec and names nodes and hosts.
func (n *Network) plan() error {
	addNode := func(name string) {
		if _, ok := n.nodes[name]; !ok {
			n.nodes[name] = &node{name: name, ns: n.nsFor("n", len(n.nodeOrder), name), idx: len(n.nodeOrder)}
			n.nodeOrder = append(n.nodeOrder, name)
		}
	}
	for i, l := range n.spec.Links {
		if l.Name == "" || l.From == "" || l.To == "" || l.From == l.To {
			return fmt.Errorf("topo: link %d (%q) needs a name and two different nodes", i, l.Name)
		}
		if err := l.Rate.Validate(); err != nil {
			return fmt.Errorf("topo: link %s: %w", l.Name, err)
		}
		addNode(l.From)
		addNode(l.To)
	}
	for i, h := range n.spec.Hosts {
		if _, dup := n.hosts[h.Name]; dup || h.Name == "" {
			return fmt.Errorf("topo: host %d: name %q empty or used twice", i, h.Name)
		}
		if _, ok := n.nodes[h.Node]; !ok {
			return fmt.Errorf("topo: host %s hangs off node %q, which no link joins", h.Name, h.Node)
		}
		n.hosts[h.Name] = newHost(n, i, h)
	}
	if err := n.planSwitches(); err != nil {
		return err
	}
	return n.planFlows()
}
