package topo

import (
	"fmt"
	"strings"
	"time"
)

// ShortestPath returns the route from one node to another: fewest hops, then lowest total delay,
// then (for determinism) the links defined first in the topology file. It is what an
// IP network with hop-count routing would do, and what seed 000's GetPath(ConfSrc, ConfDst) stands
// for. An empty path means from == to.
func (t *Topology) ShortestPath(from, to string) (Path, error) {
	src, ok := t.nodeIndex[from]
	if !ok {
		return nil, t.unknownNode(from)
	}
	dst, ok := t.nodeIndex[to]
	if !ok {
		return nil, t.unknownNode(to)
	}
	if src == dst {
		return Path{}, nil
	}
	type cost struct {
		hops  int
		delay time.Duration
	}
	less := func(a, b cost) bool { return a.hops < b.hops || a.hops == b.hops && a.delay < b.delay }
	n := len(t.nodes)
	best := make([]cost, n)
	via := make([]int, n) // link used to reach each node
	done := make([]bool, n)
	for i := range best {
		best[i] = cost{hops: -1}
		via[i] = -1
	}
	best[src] = cost{}
	// Dijkstra with a linear scan: topologies are small (tens to hundreds of nodes), and links are
	// relaxed in index order, so ties keep the first link found, which makes routes deterministic.
	for {
		u := -1
		for i := range best {
			if !done[i] && best[i].hops >= 0 && (u < 0 || less(best[i], best[u])) {
				u = i
			}
		}
		if u < 0 || u == dst {
			break
		}
		done[u] = true
		for _, li := range t.out[u] {
			l := &t.links[li]
			v := t.nodeIndex[l.To]
			c := cost{best[u].hops + 1, best[u].delay + l.Delay}
			if !done[v] && (best[v].hops < 0 || less(c, best[v])) {
				best[v], via[v] = c, li
			}
		}
	}
	if best[dst].hops < 0 {
		return nil, fmt.Errorf("no path from %q to %q", from, to)
	}
	p := make(Path, best[dst].hops)
	for v, i := dst, len(p)-1; v != src; i-- {
		p[i] = via[v]
		v = t.nodeIndex[t.links[via[v]].From]
	}
	return p, nil
}

// ResolvePath checks an explicit path given as link names: every link must exist, the first must
// leave from, each must start where the previous ended, and the last must reach to (when to is not
// empty). It returns the path and the node it ends at.
func (t *Topology) ResolvePath(from, to string, links []string) (Path, string, error) {
	if _, ok := t.nodeIndex[from]; !ok {
		return nil, "", t.unknownNode(from)
	}
	if to != "" {
		if _, ok := t.nodeIndex[to]; !ok {
			return nil, "", t.unknownNode(to)
		}
	}
	if len(links) == 0 {
		return nil, "", fmt.Errorf("empty path")
	}
	p := make(Path, 0, len(links))
	at := from
	seen := make(map[int]bool, len(links))
	for i, name := range links {
		li, ok := t.linkIndex[name]
		if !ok {
			return nil, "", fmt.Errorf("path[%d]: unknown link %q", i, name)
		}
		l := t.links[li]
		if l.From != at {
			return nil, "", fmt.Errorf("path[%d]: link %q starts at %q, but the path is at %q", i, name, l.From, at)
		}
		if seen[li] {
			return nil, "", fmt.Errorf("path[%d]: link %q used twice", i, name)
		}
		seen[li] = true
		p = append(p, li)
		at = l.To
	}
	if to != "" && at != to {
		return nil, "", fmt.Errorf("path ends at %q, not at the receiver %q", at, to)
	}
	return p, at, nil
}

func (t *Topology) unknownNode(name string) error {
	names := t.sortedNodeNames()
	if len(names) > 12 {
		names = append(names[:12], "...")
	}
	return fmt.Errorf("unknown node %q (known: %s)", name, strings.Join(names, ", "))
}
