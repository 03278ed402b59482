package streaming

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/relay"
)

// Mountpoints across the nodes of a cluster (docs/CLUSTER.md). A mountpoint lives on the node that
// feeds it (its home: its RTP ports, its RTSP source or file, the node where the API created it).
// The home announces it in the cluster's "streaming" catalog and offers its audio and video
// streams to the relay; every node lists it, and a viewer on another node watches it as a local
// one: that node imports the streams once (however many of its viewers watch) into Receivers its
// viewers' DownTracks and allocators use unchanged. Mountpoints of the configuration that every
// node has (files: live and ondemand) stay local on each node and are not announced. Requests
// that change a remote mountpoint, and info, are answered by its home.

// Relay carries a mountpoint's streams between nodes; *relay.Relay is one.
type Relay = relay.Feeds

// Option adjusts the plugin built by New.
type Option func(*Plugin)

// WithCluster lists and serves the mountpoints of every node of view; relay carries their media
// (without it, another node's mountpoints are listed but cannot be watched here). A nil view is
// one node, as without the option.
func WithCluster(view cluster.View, r Relay) Option {
	if rr, ok := r.(*relay.Relay); ok && rr == nil {
		r = nil // a server without a relay passed its nil *relay.Relay
	}
	return func(p *Plugin) {
		if view != nil {
			p.cl = &clusterNode{p: p, view: view, relay: r, log: p.log.With("component", "cluster")}
		}
	}
}

const (
	catalogName = "streaming"
	// requestPath serves the requests another node forwards to a mountpoint's home.
	requestPath = "/streaming/request"
	// kickAllPath: a mountpoint's home asks the other nodes to hang up its viewers there.
	kickAllPath = "/streaming/kick_all"
)

// importTimeout bounds the import of a mountpoint's streams from its home.
var importTimeout = 10 * time.Second

// announceTimeout bounds an announcement (it runs within the request that caused it). One that
// fails is not lost for good: the other nodes read every node's list again periodically.
const announceTimeout = 2 * time.Second

// feedName names a mountpoint's streams in the relay.
func feedName(id uint64) string { return "streaming/" + strconv.FormatUint(id, 10) }

// clusterNode is the plugin's part of the cluster.
type clusterNode struct {
	p     *Plugin
	view  cluster.View
	relay Relay
	cat   *cluster.Catalog
	self  string
	log   *slog.Logger
}

func (c *clusterNode) start() {
	c.self = c.view.Self().ID
	c.cat = cluster.NewCatalog(c.view, catalogName, cluster.CatalogEvents{Put: c.onPut, Delete: c.onDelete}, 0, c.log)
	c.view.Handle(requestPath, c.handleRequest)
	c.view.Handle(kickAllPath, c.handleKickAll)
	c.cat.Start()
	for _, mp := range c.p.mountpointList(false) {
		if mp.announced {
			c.announce(mp, true)
		}
	}
}

func (c *clusterNode) close() { c.cat.Close() }

// announce offers a local mountpoint to the other nodes (again after a change: export false).
func (c *clusterNode) announce(mp *mountpoint, export bool) {
	if export && c.relay != nil {
		var streams []relay.Stream
		for _, st := range mp.relayedStreams() {
			layers := 1
			if st.simulcast {
				layers = 3
			}
			streams = append(streams, relay.Stream{Mid: st.mid, Codec: capability(st), PayloadType: uint8(st.pt),
				Simulcast: st.simulcast, Layers: layers, Receiver: st.recv})
		}
		if len(streams) > 0 {
			if err := c.relay.Export(feedName(mp.id), streams); err != nil {
				c.log.Warn("exporting a mountpoint to the relay", "id", mp.id, "err", err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
	defer cancel()
	if err := c.cat.Put(ctx, strconv.FormatUint(mp.id, 10), mp.wire()); err != nil {
		c.log.Warn("announcing a mountpoint", "id", mp.id, "err", err)
	}
}

// withdraw tells the other nodes a local mountpoint is gone.
func (c *clusterNode) withdraw(mp *mountpoint) {
	if c.relay != nil {
		c.relay.Unexport(feedName(mp.id))
	}
	ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
	defer cancel()
	if err := c.cat.Delete(ctx, strconv.FormatUint(mp.id, 10)); err != nil {
		c.log.Warn("withdrawing a mountpoint", "id", mp.id, "err", err)
	}
}

// onPut takes another node's announcement of one of its mountpoints.
func (c *clusterNode) onPut(node, key string, raw json.RawMessage) error {
	w, err := decodeWireMountpoint(raw)
	if err == nil && strconv.FormatUint(w.ID, 10) != key {
		err = fmt.Errorf("mountpoint %d announced as %.32q", w.ID, key)
	}
	if err != nil {
		return err
	}
	p := c.p
	p.mu.Lock()
	if _, local := p.mps[w.ID]; local {
		p.mu.Unlock()
		c.log.Debug("another node announces a mountpoint id this node has (this node's wins here)", "id", w.ID, "node", node)
		return nil
	}
	old := p.remote[w.ID]
	if old != nil && old.home == node && sameMedia(old.wireOf(), w) {
		p.mu.Unlock()
		wasEnabled := old.isEnabled()
		old.setWire(w)
		if w.Enabled != wasEnabled {
			for _, s := range old.viewerList() {
				if v := s.viewer(); v != nil {
					v.applyPause() // follows enable and disable
				}
			}
		}
		return nil
	}
	p.remote[w.ID] = p.remoteMountpoint(node, w)
	p.mu.Unlock()
	if old != nil {
		old.close()
	}
	return nil
}

// onDelete: a node's mountpoint was destroyed, or the node is gone. Its viewers here are told it
// stopped, as viewers of a destroyed local mountpoint are.
func (c *clusterNode) onDelete(node, key string) {
	id, err := strconv.ParseUint(key, 10, 64)
	if err != nil {
		return
	}
	p := c.p
	p.mu.Lock()
	mp := p.remote[id]
	if mp == nil || mp.home != node {
		p.mu.Unlock()
		return
	}
	delete(p.remote, id)
	p.mu.Unlock()
	mp.close()
}

// retire replaces this node's copy of a remote mountpoint by a fresh one (its import ended: the
// link or the home's export went away, or its last viewer here left) and closes the old copy.
func (c *clusterNode) retire(mp *mountpoint) {
	p := c.p
	p.mu.Lock()
	if p.remote[mp.id] == mp {
		p.remote[mp.id] = p.remoteMountpoint(mp.home, mp.wireOf())
	}
	p.mu.Unlock()
	mp.close()
}

// hold makes sure a remote mountpoint's streams are imported before a viewer uses them; the
// caller calls mp.unhold once the viewer was added (or not). Local mountpoints need nothing.
func (c *clusterNode) hold(ctx context.Context, mp *mountpoint) *Error {
	if mp.home == "" {
		return nil
	}
	if c == nil || c.relay == nil {
		return errorf(ErrUnknown, "Mountpoint %d is on node %s and no relay carries it here", mp.id, mp.home)
	}
	mp.impMu.Lock()
	defer mp.impMu.Unlock()
	mp.mu.Lock()
	if mp.closed {
		mp.mu.Unlock()
		return NoSuchMountpoint(mp.id)
	}
	if mp.imp != nil {
		mp.holds++
		mp.mu.Unlock()
		return nil
	}
	mp.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	imp, err := c.relay.Import(ctx, mp.home, feedName(mp.id))
	if err != nil {
		return errorf(ErrUnknown, "Mountpoint %d could not be relayed from node %s: %v", mp.id, mp.home, err)
	}
	recvs := imp.Receivers()
	for _, st := range mp.streams {
		if recvs[st.mid] == nil || recvs[st.mid].Codec() != st.codec {
			imp.Release()
			return errorf(ErrUnknown, "Mountpoint %d: node %s relays no %s stream %s", mp.id, mp.home, st.codecName, st.mid)
		}
	}
	mp.mu.Lock()
	if mp.closed {
		mp.mu.Unlock()
		imp.Release()
		return NoSuchMountpoint(mp.id)
	}
	for _, st := range mp.streams {
		st.recv = recvs[st.mid]
	}
	mp.imp = imp
	mp.holds++
	mp.mu.Unlock()
	imp.OnGone(func() { c.retire(mp) })
	return nil
}

// unhold ends a hold; a remote mountpoint nobody here holds or watches any more stops being
// imported.
func (mp *mountpoint) unhold() {
	if mp.home == "" {
		return
	}
	mp.mu.Lock()
	mp.holds--
	idle := mp.idleLocked()
	mp.mu.Unlock()
	if idle {
		mp.p.cl.retire(mp)
	}
}

// idleLocked reports whether an imported remote mountpoint has neither viewers nor holds.
func (mp *mountpoint) idleLocked() bool {
	return mp.home != "" && !mp.closed && mp.imp != nil && mp.holds == 0 && len(mp.viewers) == 0
}

// releaseImport ends a closed remote mountpoint's import.
func (mp *mountpoint) releaseImport() {
	mp.mu.Lock()
	imp := mp.imp
	mp.imp = nil
	mp.mu.Unlock()
	if imp != nil {
		imp.Release()
	}
}

func (mp *mountpoint) wireOf() wireMountpoint {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	return mp.wireDesc
}

// forwardedRequest is a synchronous request for a mountpoint of the node it is sent to.
type forwardedRequest struct {
	Body json.RawMessage `json:"body"`
}

// forward sends a request about a remote mountpoint to its home and returns the home's answer.
func (c *clusterNode) forward(mp *mountpoint, raw json.RawMessage) (any, *Error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var ans json.RawMessage
	if err := c.view.Call(ctx, mp.home, requestPath, forwardedRequest{Body: raw}, &ans); err != nil {
		return nil, errorf(ErrUnknown, "Mountpoint %d is on node %s, which did not answer: %v", mp.id, mp.home, err)
	}
	return ans, nil
}

// handleRequest answers a request another node forwarded for one of this node's mountpoints.
func (c *clusterNode) handleRequest(_ context.Context, from string, raw json.RawMessage) (any, error) {
	var req forwardedRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("streaming: malformed forwarded request from %s: %w", from, err)
	}
	if len(req.Body) == 0 {
		return nil, errors.New("streaming: forwarded request without a body")
	}
	name, b, rerr := Decode(req.Body)
	if rerr != nil {
		return rerr.Data(Short), nil
	}
	if Asynchronous(name) || name == "create" || name == "list" {
		return errorf(ErrInvalidReq, "Request '%s' is not forwarded", name).Data(Short), nil
	}
	return c.p.handleSyncLocal(name, b), nil
}

// withNode adds the home node's id (strata's) to a mountpoint's list entry or info.
func (c *clusterNode) withNode(mp *mountpoint, m map[string]any) map[string]any {
	if c == nil {
		return m
	}
	switch {
	case mp.home != "":
		m["node"] = mp.home
	case mp.announced:
		m["node"] = c.self
	}
	return m
}

// remoteInfo is info for a remote mountpoint: its home's answer, with the home's id.
func (c *clusterNode) remoteInfo(mp *mountpoint, raw json.RawMessage) (any, *Error) {
	ans, err := c.forward(mp, raw)
	if err != nil {
		return nil, err
	}
	var data map[string]any
	if json.Unmarshal(ans.(json.RawMessage), &data) != nil {
		return nil, errorf(ErrUnknown, "Mountpoint %d: node %s answered info with no object", mp.id, mp.home)
	}
	if info, ok := data["info"].(map[string]any); ok {
		info["node"] = mp.home
	}
	return data, nil
}

// kickAllRequest names the mountpoint whose viewers on the node it is sent to are hung up.
type kickAllRequest struct {
	ID uint64 `json:"id"`
}

// kickAllElsewhere asks every other node to hang up its viewers of this node's mountpoint id
// (kick_all, whose answer does not wait for them).
func (c *clusterNode) kickAllElsewhere(id uint64) {
	for _, n := range c.view.Nodes() {
		if n.ID == c.self {
			continue
		}
		go func(node string) {
			ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
			defer cancel()
			if err := c.view.Call(ctx, node, kickAllPath, kickAllRequest{ID: id}, nil); err != nil {
				c.log.Info("kick_all on another node", "node", node, "id", id, "err", err)
			}
		}(n.ID)
	}
}

// handleKickAll hangs up this node's viewers of the calling node's mountpoint.
func (c *clusterNode) handleKickAll(_ context.Context, from string, raw json.RawMessage) (any, error) {
	var req kickAllRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("streaming: malformed kick_all from %s: %w", from, err)
	}
	mp := c.p.mountpoint(req.ID)
	if mp == nil || mp.home != from {
		return struct{}{}, nil // no viewer of it here
	}
	for _, s := range mp.viewerList() {
		s.endViewing(mp, "kicked_all")
	}
	return struct{}{}, nil
}
