package topo

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/strata-rtc/strata/internal/yamlfield"
)

// MaxFileSize bounds topology files (they are a few KB in practice).
const MaxFileSize = 4 << 20

// Error lists every problem found in a topology file, each as "file:line: field: message".
type Error = yamlfield.Error

// decoder is the shared strict YAML decoder plus the topology's node and link decoders.
type decoder struct{ *yamlfield.Decoder }

type fieldFn = yamlfield.FieldFunc

// Load reads and parses a topology file.
func Load(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses a topology from YAML; file names the source in error messages. The format:
//
//	name: seed000-exp1
//	nodes:
//	  - paris                                  # a bare name, or
//	  - {name: madrid, enforcer: true, role: receiver}
//	links:
//	  - {from: paris, to: madrid, capacity: 2Mbps, delay: 6ms, duplex: true,
//	     name: paris-madrid, interface: eth1, peer_interface: eth0}
//
// Links are one-way; duplex: true adds the reverse link (named NAME-rev, or TO->FROM when no name
// is given; its interface is the forward link's peer_interface and vice versa). A link without a
// name is called FROM->TO. Capacities need a unit (bps, kbps, Mbps, Gbps, or kbit/s ...), delays
// a Go duration unit.
func Parse(file string, data []byte) (*Topology, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{Problems: []string{fmt.Sprintf("%s:1: file larger than %d bytes", file, MaxFileSize)}}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{Problems: []string{fmt.Sprintf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))}}
	}
	d := &decoder{&yamlfield.Decoder{File: file, Root: "(top level)"}}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		d.Failf(&root, "", "empty topology file")
		return nil, d.Err()
	}
	var name string
	var nodes []nodeSpec
	var links []linkSpec
	d.Mapping(root.Content[0], "", map[string]fieldFn{
		"name":        func(v *yaml.Node, f string) { d.Str(v, f, &name) },
		"description": func(v *yaml.Node, f string) { var s string; d.Str(v, f, &s) },
		"nodes": func(v *yaml.Node, f string) {
			d.Sequence(v, f, func(item *yaml.Node, f string, _ int) { nodes = append(nodes, d.node(item, f)) })
		},
		"links": func(v *yaml.Node, f string) {
			d.Sequence(v, f, func(item *yaml.Node, f string, _ int) { links = append(links, d.link(item, f)) })
		},
	})
	if d.FieldFailed("") || d.FieldFailed("nodes") {
		return nil, d.Err() // cross-references would only add noise
	}
	return d.build(name, nodes, links)
}

// nodeSpec and linkSpec keep each value's line for error messages.
type nodeSpec struct {
	Node
	line int
}

type linkSpec struct {
	Link
	duplex            bool
	named             bool
	line, from, to, n int // lines of the link and of its from, to and name fields
}

func (d *decoder) node(n *yaml.Node, field string) nodeSpec {
	s := nodeSpec{line: n.Line}
	if n.Kind == yaml.ScalarNode {
		s.Name = n.Value
		return s
	}
	d.Mapping(n, field, map[string]fieldFn{
		"name":     func(v *yaml.Node, f string) { d.Str(v, f, &s.Name) },
		"enforcer": func(v *yaml.Node, f string) { d.Boolean(v, f, &s.Enforcer) },
		"role":     func(v *yaml.Node, f string) { d.Str(v, f, &s.Role) },
	})
	return s
}

func (d *decoder) link(n *yaml.Node, field string) linkSpec {
	s := linkSpec{line: n.Line}
	capSet := false
	d.Mapping(n, field, map[string]fieldFn{
		"name": func(v *yaml.Node, f string) { d.Str(v, f, &s.Name); s.named, s.n = true, v.Line },
		"from": func(v *yaml.Node, f string) { d.Str(v, f, &s.From); s.from = v.Line },
		"to":   func(v *yaml.Node, f string) { d.Str(v, f, &s.To); s.to = v.Line },
		"capacity": func(v *yaml.Node, f string) {
			if str, ok := d.Scalar(v, f); ok {
				r, err := ParseRate(str)
				if err == nil && r <= 0 {
					err = fmt.Errorf("capacity must be positive, got %q", str)
				}
				if err != nil {
					d.Failf(v, f, "%v", err)
				}
				s.Capacity, capSet = r, err == nil
			}
		},
		"delay": func(v *yaml.Node, f string) {
			if str, ok := d.Scalar(v, f); ok {
				dl, err := ParseDelay(str)
				if err != nil {
					d.Failf(v, f, "%v", err)
				}
				s.Delay = dl
			}
		},
		"duplex":         func(v *yaml.Node, f string) { d.Boolean(v, f, &s.duplex) },
		"interface":      func(v *yaml.Node, f string) { d.Str(v, f, &s.Interface) },
		"peer_interface": func(v *yaml.Node, f string) { d.Str(v, f, &s.PeerInterface) },
	})
	for _, req := range []struct {
		name string
		set  bool
	}{{"from", s.from > 0}, {"to", s.to > 0}, {"capacity", capSet}} {
		if !req.set && !d.FieldFailed(field) && !d.FieldFailed(field+"."+req.name) {
			d.Failf(n, field+"."+req.name, "missing (every link needs from, to and capacity)")
		}
	}
	return s
}

// build checks cross-references with line numbers, then hands over to New.
func (d *decoder) build(name string, nodes []nodeSpec, links []linkSpec) (*Topology, error) {
	known := map[string]bool{}
	var ns []Node
	for i, n := range nodes {
		f := fmt.Sprintf("nodes[%d]", i)
		if err := CheckName(n.Name); err != nil {
			d.FailLine(n.line, f+".name", "%v", err)
		} else if known[n.Name] {
			d.FailLine(n.line, f+".name", "node %q defined twice", n.Name)
		}
		known[n.Name] = true
		ns = append(ns, n.Node)
	}
	if len(nodes) == 0 {
		d.FailLine(1, "nodes", "the topology needs at least one node")
	}
	names := map[string]int{}
	var ls []Link
	for i, l := range links {
		f := fmt.Sprintf("links[%d]", i)
		for _, end := range []struct {
			field, node string
			line        int
		}{{"from", l.From, l.from}, {"to", l.To, l.to}} {
			if end.line > 0 && !known[end.node] {
				d.FailLine(end.line, f+"."+end.field, "unknown node %q (known: %s)", end.node, strings.Join(sortedKeys(known), ", "))
			}
		}
		if l.From == l.To && l.from > 0 {
			d.FailLine(l.line, f, "link from %q to itself", l.From)
		}
		fwd, rev := l.Link, l.reverse()
		if !l.named {
			fwd.Name = l.From + "->" + l.To
		}
		pair := []Link{fwd}
		if l.duplex {
			pair = append(pair, rev)
		}
		for _, x := range pair {
			line := max(l.n, l.line)
			if err := CheckName(x.Name); err != nil {
				d.FailLine(line, f+".name", "%v", err)
			} else if prev, dup := names[x.Name]; dup {
				d.FailLine(line, f+".name", "link %q already defined at line %d", x.Name, prev)
			}
			names[x.Name] = l.line
			ls = append(ls, x)
		}
	}
	if d.Err() != nil {
		return nil, d.Err()
	}
	t, err := New(name, ns, ls)
	if err != nil {
		d.FailLine(1, "links", "%v", err)
		return nil, d.Err()
	}
	return t, nil
}

// reverse is the other direction of a duplex link.
func (l linkSpec) reverse() Link {
	r := Link{From: l.To, To: l.From, Capacity: l.Capacity, Delay: l.Delay,
		Interface: l.PeerInterface, PeerInterface: l.Interface}
	if l.named {
		r.Name = l.Name + "-rev"
	} else {
		r.Name = l.To + "->" + l.From
	}
	return r
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) > 12 {
		out = append(out[:12], "...")
	}
	return out
}
