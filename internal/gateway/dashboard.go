package gateway

import (
	"cmp"
	"slices"

	"github.com/strata-rtc/strata/internal/peer"
)

// HandleRef names a live handle and its current PeerConnection (nil when it has none), for the
// admin dashboard, which reads the Peer's counters itself.
type HandleRef struct {
	Session  uint64
	Handle   uint64
	Plugin   string
	OpaqueID string
	Peer     *peer.Peer
}

// HandleRefs lists the live handles, by session then handle id. The gateway's lock is held only to
// copy the map; each handle's own lock to read its PeerConnection.
func (g *Gateway) HandleRefs() []HandleRef {
	g.mu.RLock()
	hs := make([]*handle, 0, len(g.handles))
	for _, h := range g.handles {
		hs = append(hs, h)
	}
	g.mu.RUnlock()
	out := make([]HandleRef, 0, len(hs))
	for _, h := range hs {
		out = append(out, HandleRef{Session: h.sess.id, Handle: h.id, Plugin: h.plug.Package(), OpaqueID: h.opaqueID, Peer: h.currentPeer()})
	}
	slices.SortFunc(out, func(a, b HandleRef) int {
		return cmp.Or(cmp.Compare(a.Session, b.Session), cmp.Compare(a.Handle, b.Handle))
	})
	return out
}

// SessionRef names a live session and the transport it last used.
type SessionRef struct {
	ID        uint64
	Transport string
}

// SessionRefs lists the live sessions by id.
func (g *Gateway) SessionRefs() []SessionRef {
	g.mu.RLock()
	ss := make([]*session, 0, len(g.sessions))
	for _, s := range g.sessions {
		ss = append(ss, s)
	}
	g.mu.RUnlock()
	out := make([]SessionRef, 0, len(ss))
	for _, s := range ss {
		out = append(out, SessionRef{ID: s.id, Transport: s.transportName()})
	}
	slices.SortFunc(out, func(a, b SessionRef) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// PluginQuery is the plugin_specific part of a handle's handle_info (nil when the handle is gone),
// which the dashboard reads the layers from.
func (g *Gateway) PluginQuery(handleID uint64) any {
	h := g.handle(handleID)
	if h == nil || h.ps == nil {
		return nil
	}
	return h.query()
}
