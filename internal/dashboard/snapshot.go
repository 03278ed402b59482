package dashboard

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/plugin"
)

// MaxPeerConnections caps the PeerConnections a snapshot lists (the busiest first), and
// MaxSessions the sessions, so a big server's snapshot stays a few tens of kilobytes.
const (
	MaxPeerConnections = 50
	MaxSessions        = 200
)

// Snapshot is what /dashboard/data returns: the server at one moment.
type Snapshot struct {
	Time            time.Time        `json:"time"`
	SessionCount    int              `json:"session_count"`
	Sessions        []Session        `json:"sessions"`
	Plugins         []PluginState    `json:"plugins"`
	PeerCount       int              `json:"peer_connection_count"`
	PeerConnections []PeerConnection `json:"peer_connections"`
	// Netctl is the videoroom's view of its network controller; absent when none is configured.
	Netctl any `json:"netctl,omitempty"`
}

// Session is a live Janus session.
type Session struct {
	ID        uint64 `json:"id"`
	Transport string `json:"transport"`
	Handles   int    `json:"handles"`
}

// PluginState is a plugin's handles and, for plugins with rooms, its rooms and participants.
type PluginState struct {
	Name         string `json:"name"`
	Handles      int    `json:"handles"`
	Rooms        int    `json:"rooms"`
	Participants int    `json:"participants"`
	Publishers   int    `json:"publishers"`
	Subscribers  int    `json:"subscribers"`
}

// PeerConnection is one handle's PeerConnection. Bitrates are computed from the counter deltas
// between snapshots (0 in the first one).
type PeerConnection struct {
	Session      uint64  `json:"session_id"`
	Handle       uint64  `json:"handle_id"`
	Plugin       string  `json:"plugin"`
	OpaqueID     string  `json:"opaque_id,omitempty"`
	BitrateIn    uint64  `json:"bitrate_in_bps"`
	BitrateOut   uint64  `json:"bitrate_out_bps"`
	Estimate     uint64  `json:"estimate_bps"`
	RTTMs        float64 `json:"rtt_ms"`
	FeedbackLoss float64 `json:"feedback_loss"` // fraction; -1 unknown
	ReportedLost int64   `json:"reported_lost"`
	NACKedIn     uint64  `json:"nacked_in"`
	NACKedOut    uint64  `json:"nacked_out"`
	Layers       []Layer `json:"layers,omitempty"`
}

// Layer is the simulcast/SVC layer a subscriber's stream forwards and aims at (videoroom and other
// plugins whose handle_info lists streams with current/target).
type Layer struct {
	Mid     string `json:"mid"`
	Current string `json:"current"`
	Target  string `json:"target"`
}

// Gateway is what a snapshot reads from the Janus core (*gateway.Gateway).
type Gateway interface {
	SessionRefs() []gateway.SessionRef
	HandleRefs() []gateway.HandleRef
	PluginQuery(handleID uint64) any
}

// NetctlViewer is implemented by plugins that talk to a network controller (the videoroom).
type NetctlViewer interface {
	NetctlView() any
}

// builder makes snapshots; it keeps the previous counters for the rates.
type builder struct {
	gw      Gateway
	plugins []plugin.Plugin
	rates   *rateTracker
	now     func() time.Time
}

func (b *builder) snapshot() Snapshot {
	now := b.now()
	handles := b.gw.HandleRefs()
	snap := Snapshot{Time: now}
	snap.Sessions, snap.SessionCount = sessions(b.gw.SessionRefs(), handles)
	snap.Plugins = b.pluginStates(handles)
	snap.PeerConnections, snap.PeerCount = b.peerConnections(handles, now)
	for _, p := range b.plugins {
		if v, ok := p.(NetctlViewer); ok {
			if view := v.NetctlView(); view != nil {
				snap.Netctl = view
			}
		}
	}
	return snap
}

func sessions(refs []gateway.SessionRef, handles []gateway.HandleRef) ([]Session, int) {
	per := map[uint64]int{}
	for _, h := range handles {
		per[h.Session]++
	}
	out := make([]Session, 0, min(len(refs), MaxSessions))
	for _, r := range refs[:min(len(refs), MaxSessions)] {
		out = append(out, Session{ID: r.ID, Transport: r.Transport, Handles: per[r.ID]})
	}
	return out, len(refs)
}

func (b *builder) pluginStates(handles []gateway.HandleRef) []PluginState {
	per := map[string]int{}
	for _, h := range handles {
		per[h.Plugin]++
	}
	out := make([]PluginState, 0, len(b.plugins))
	for _, p := range b.plugins {
		st := PluginState{Name: p.Package(), Handles: per[p.Package()]}
		if c, ok := p.(plugin.Counter); ok {
			n := c.Counts()
			st.Rooms, st.Participants, st.Publishers, st.Subscribers = n.Rooms, n.Participants, n.Publishers, n.Subscribers
		}
		out = append(out, st)
	}
	return out
}

// peerConnections reads every PeerConnection's counters (atomics), computes the rates, and keeps
// the busiest MaxPeerConnections; only those get their layers read from the plugin.
func (b *builder) peerConnections(handles []gateway.HandleRef, now time.Time) ([]PeerConnection, int) {
	live := map[uint64]bool{}
	pcs := []PeerConnection{} // [] rather than null in the JSON: the page reads its length
	for _, h := range handles {
		if h.Peer == nil {
			continue
		}
		live[h.Handle] = true
		s := h.Peer.Summary()
		r := b.rates.update(h.Handle, counts{s.BytesIn, s.BytesOut}, now)
		pcs = append(pcs, PeerConnection{
			Session: h.Session, Handle: h.Handle, Plugin: h.Plugin, OpaqueID: h.OpaqueID,
			BitrateIn: r.in, BitrateOut: r.out, Estimate: uint64(s.Estimate),
			RTTMs: float64(s.RTT.Microseconds()) / 1000, FeedbackLoss: s.FeedbackLoss,
			ReportedLost: s.ReportedLost, NACKedIn: s.NACKedIn, NACKedOut: s.NACKedOut,
		})
	}
	b.rates.forget(live)
	total := len(pcs)
	slices.SortStableFunc(pcs, func(a, b PeerConnection) int {
		return cmp.Compare(b.BitrateIn+b.BitrateOut, a.BitrateIn+a.BitrateOut)
	})
	pcs = pcs[:min(len(pcs), MaxPeerConnections)]
	for i := range pcs {
		pcs[i].Layers = layersOf(b.gw.PluginQuery(pcs[i].Handle))
	}
	return pcs, total
}

// layersOf picks the streams' current and target layers out of a handle's plugin_specific
// (videoroom subscribers: streams[].current/target); nil when it lists none.
func layersOf(query any) []Layer {
	raw, ok := query.(json.RawMessage)
	if !ok {
		return nil
	}
	var q struct {
		Streams []Layer `json:"streams"`
	}
	if json.Unmarshal(raw, &q) != nil {
		return nil
	}
	var out []Layer
	for _, s := range q.Streams {
		if s.Current != "" || s.Target != "" {
			out = append(out, s)
		}
	}
	return out
}
