// Package topo is the network controller's model of the network: nodes and one-way links with a
// capacity and an optional propagation delay, loaded from a YAML file (Load, Parse) or built in Go
// (New, for the simulator), and path computation over it (ShortestPath, ResolvePath).
//
// A Topology is immutable once built and safe for concurrent use. Links are addressed by name in
// the API and by index (their position in Links()) inside the controller, so that paths are cheap
// slices of ints.
package topo

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Node is a network node: a host, a switch, the SFU's machine.
type Node struct {
	Name string `json:"name"`
	// Enforcer marks nodes that can drop layers (the SDN switches of seed 000). When no node of the
	// topology is marked, every node can enforce.
	Enforcer bool `json:"enforcer,omitempty"`
	// Role is free text for people (sfu, switch, receiver, ...); the controller does not read it.
	Role string `json:"role,omitempty"`
}

// Link is a one-way link.
type Link struct {
	Name     string        `json:"name"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Capacity cc.Bitrate    `json:"capacity_bps"`
	Delay    time.Duration `json:"delay_ns,omitempty"`
	// Interface is the interface of From that transmits this link: its tx counters measure the
	// link's load. PeerInterface is the interface of To that receives it (rx counters). Both are
	// optional; they only matter to agents reporting interface counters.
	Interface     string `json:"interface,omitempty"`
	PeerInterface string `json:"peer_interface,omitempty"`
}

// Path is a list of link indices, from the first hop to the last.
type Path []int

// Topology is a validated network model.
type Topology struct {
	name        string
	nodes       []Node
	links       []Link
	nodeIndex   map[string]int
	linkIndex   map[string]int
	out         [][]int // link indices leaving each node, in link order
	anyEnforcer bool
	// ifaceLinks maps "node/iface/tx" and "node/iface/rx" to the link those counters measure.
	ifaceLinks map[string]int
}

// Limits bound what a topology may contain, so that a hostile file cannot exhaust memory.
const (
	MaxNodes   = 10000
	MaxLinks   = 100000
	MaxNameLen = 128
)

// New validates nodes and links and builds a Topology. Errors name the offending node or link.
func New(name string, nodes []Node, links []Link) (*Topology, error) {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if len(nodes) == 0 {
		fail("topology has no nodes")
	}
	if len(nodes) > MaxNodes || len(links) > MaxLinks {
		return nil, fmt.Errorf("topology too large: %d nodes, %d links (limits %d, %d)", len(nodes), len(links), MaxNodes, MaxLinks)
	}
	t := &Topology{
		name: name, nodes: append([]Node(nil), nodes...), links: append([]Link(nil), links...),
		nodeIndex: make(map[string]int, len(nodes)), linkIndex: make(map[string]int, len(links)),
		out: make([][]int, len(nodes)), ifaceLinks: map[string]int{},
	}
	for i, n := range t.nodes {
		if err := CheckName(n.Name); err != nil {
			fail("node %d: %v", i, err)
			continue
		}
		if _, dup := t.nodeIndex[n.Name]; dup {
			fail("node %q defined twice", n.Name)
			continue
		}
		t.nodeIndex[n.Name] = i
		t.anyEnforcer = t.anyEnforcer || n.Enforcer
	}
	for i, l := range t.links {
		for _, e := range t.checkLink(i, l) {
			fail("link %q: %s", l.Name, e)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return t, nil
}

// checkLink validates one link and indexes it; it returns the problems found.
func (t *Topology) checkLink(i int, l Link) []string {
	var errs []string
	if err := CheckName(l.Name); err != nil {
		return []string{err.Error()}
	}
	if _, dup := t.linkIndex[l.Name]; dup {
		return []string{"defined twice"}
	}
	from, okFrom := t.nodeIndex[l.From]
	_, okTo := t.nodeIndex[l.To]
	if !okFrom {
		errs = append(errs, fmt.Sprintf("unknown node %q in from", l.From))
	}
	if !okTo {
		errs = append(errs, fmt.Sprintf("unknown node %q in to", l.To))
	}
	if l.From == l.To && okFrom {
		errs = append(errs, "from and to are the same node")
	}
	if l.Capacity <= 0 {
		errs = append(errs, fmt.Sprintf("capacity must be positive, got %d bit/s", l.Capacity))
	}
	if l.Delay < 0 {
		errs = append(errs, "negative delay")
	}
	for _, m := range []struct{ node, iface, dir string }{{l.From, l.Interface, "tx"}, {l.To, l.PeerInterface, "rx"}} {
		if m.iface == "" {
			continue
		}
		if err := CheckName(m.iface); err != nil {
			errs = append(errs, "interface: "+err.Error())
			continue
		}
		key := m.node + "/" + m.iface + "/" + m.dir
		if other, dup := t.ifaceLinks[key]; dup {
			errs = append(errs, fmt.Sprintf("%s counters of %s on %s already measure link %q", m.dir, m.iface, m.node, t.links[other].Name))
			continue
		}
		t.ifaceLinks[key] = i
	}
	if len(errs) == 0 {
		t.linkIndex[l.Name] = i
		t.out[from] = append(t.out[from], i)
	}
	return errs
}

// CheckName accepts names made of letters, digits and . _ - > : @ (no spaces, no slashes), so that
// they can appear in URLs, logs and YAML without quoting trouble.
func CheckName(s string) error {
	if s == "" {
		return fmt.Errorf("empty name")
	}
	if len(s) > MaxNameLen {
		return fmt.Errorf("name longer than %d characters", MaxNameLen)
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._->:@", r)
		if !ok {
			return fmt.Errorf("name %q: character %q not allowed (use letters, digits and . _ - > : @)", s, r)
		}
	}
	return nil
}

// Name is the topology's name (from the file, or given to New).
func (t *Topology) Name() string { return t.name }

// Nodes returns the nodes in definition order. The slice must not be modified.
func (t *Topology) Nodes() []Node { return t.nodes }

// Links returns the links in definition order; a link's index is its position here. The slice must
// not be modified.
func (t *Topology) Links() []Link { return t.links }

// HasNode reports whether the topology has a node of that name.
func (t *Topology) HasNode(name string) bool { _, ok := t.nodeIndex[name]; return ok }

// LinkIndex returns the index of the named link.
func (t *Topology) LinkIndex(name string) (int, bool) {
	i, ok := t.linkIndex[name]
	return i, ok
}

// CounterLink returns the link whose load the given interface counter measures: dir is "tx" (the
// interface transmits the link) or "rx" (it receives it).
func (t *Topology) CounterLink(node, iface, dir string) (int, bool) {
	i, ok := t.ifaceLinks[node+"/"+iface+"/"+dir]
	return i, ok
}

// CanEnforce reports whether a node can drop layers.
func (t *Topology) CanEnforce(node string) bool {
	i, ok := t.nodeIndex[node]
	return ok && (!t.anyEnforcer || t.nodes[i].Enforcer)
}

// EnforcementPoint is the node that applies drop rules for a path: the first node along it that
// can enforce (seed 000 puts the switches as close to the SFU as possible, so that dropped layers
// never enter the network). ok is false when no node on the path can.
func (t *Topology) EnforcementPoint(p Path) (node string, link int, ok bool) {
	for _, li := range p {
		if from := t.links[li].From; t.CanEnforce(from) {
			return from, li, true
		}
	}
	return "", -1, false
}

// Names returns the link names of a path.
func (t *Topology) Names(p Path) []string {
	out := make([]string, len(p))
	for i, li := range p {
		out[i] = t.links[li].Name
	}
	return out
}

// sortedNodeNames lists node names alphabetically (for error messages).
func (t *Topology) sortedNodeNames() []string {
	out := make([]string, 0, len(t.nodes))
	for n := range t.nodeIndex {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
