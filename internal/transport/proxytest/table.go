// Package proxytest tests the Janus API transports as nodes of a cluster: several gateways in one
// process, each with its HTTP and WebSocket transport on free ports, sharing Table, a fixed table of
// nodes that stands in for the cluster's membership (the real one, cluster.Node, needs the engine).
package proxytest

import (
	"sync"

	"github.com/strata-rtc/strata/internal/cluster"
)

// Table is a cluster membership written by hand: the live nodes by slot, and the ones that refuse
// new sessions. Seen from one node (From), it is the cluster.Proxy that node's transports use.
type Table struct {
	mu       sync.Mutex
	nodes    map[int]cluster.NodeRecord
	refusing map[int]string // slot → why
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{nodes: map[int]cluster.NodeRecord{}, refusing: map[int]string{}}
}

// Put adds or replaces a node (by its slot); Remove forgets one (its record lapsed).
func (t *Table) Put(n cluster.NodeRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nodes[n.Slot] = n
}

// Remove forgets the node of slot.
func (t *Table) Remove(slot int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.nodes, slot)
}

// Refuse makes the node of slot refuse new sessions for why ("": take them again).
func (t *Table) Refuse(slot int, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if why == "" {
		delete(t.refusing, slot)
	} else {
		t.refusing[slot] = why
	}
}

// From is the table as the node of slot sees it.
func (t *Table) From(slot int) cluster.Proxy { return view{t, slot} }

type view struct {
	t    *Table
	self int
}

// Locate implements cluster.Proxy.
func (v view) Locate(sessionID uint64) (cluster.NodeRecord, bool) {
	slot := cluster.SessionSlot(sessionID)
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	n, ok := v.t.nodes[slot]
	return n, ok && slot != v.self
}

// Accepting implements cluster.Proxy.
func (v view) Accepting() (bool, string) {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	why, refusing := v.t.refusing[v.self]
	return !refusing, why
}
