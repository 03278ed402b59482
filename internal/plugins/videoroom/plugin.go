// Package videoroom is janus.plugin.videoroom, strata's SFU, with the API of Janus 1.x's multistream
// VideoRoom: rooms (from the configuration and the API), publishers that send any number of audio
// and video streams (simulcast by RID or by SSRC, VP8 temporal layers, VP9 SVC, AV1 with the
// Dependency Descriptor), subscribers that receive any set of streams from any publishers on one
// PeerConnection (strata sends the offer), and plain-RTP forwarders.
//
// Unlike Janus, every subscriber gets the layers its own path carries: each subscriber
// PeerConnection has a bandwidth estimator (package bwe), and an allocator (package sfu) splits
// that estimate over the subscriber's video streams and moves their layers. What the API's
// substream/temporal and spatial_layer/temporal_layer ask for is a cap on that allocation.
package videoroom

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"sync"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Package is the Janus package name clients attach to.
const Package = "janus.plugin.videoroom"

const short = "videoroom"

// Plugin is the videoroom plugin. Create it with New.
type Plugin struct {
	cfg   config.VideoRoom
	rec   record.SessionOptions // what recordings write beside the .mjr files
	alloc sfu.AllocatorConfig
	log   *slog.Logger

	// net connects to the network controller (nil without one).
	net *netBridge
	// census counts every subscriber's congestion, so that a cause they share (the server
	// stalled) pauses no one's video.
	census *sfu.Census

	mu    sync.Mutex
	rooms map[uint64]*room

	sessions plugin.SessionSet[*session]

	// cl makes rooms span the nodes of a cluster (cluster.go); nil with one node.
	cl *clusterNode
}

// New creates the plugin with the rooms of the configuration; rec says what recordings write
// beside the .mjr files (the configuration's recording section).
func New(cfg config.VideoRoom, rec record.SessionOptions, log *slog.Logger, opts ...Option) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{cfg: cfg, rec: rec, alloc: cfg.Allocation.AllocatorConfig, log: log, rooms: map[uint64]*room{}, census: sfu.NewCensus()}
	for _, r := range cfg.Rooms {
		p.rooms[r.ID] = newRoom(r.ID, optionsFromConfig(r))
	}
	p.net = newNetBridge(p, cfg.NetCtl, log)
	for _, o := range opts {
		o(p)
	}
	if p.cl != nil {
		p.cl.start()
	}
	return p
}

// Package returns "janus.plugin.videoroom".
func (p *Plugin) Package() string { return Package }

// publisherPeerOptions: strata sends no media to a publisher, so Pion's NACK responder (a copy of
// every packet sent) has nothing to answer.
func (p *Plugin) publisherPeerOptions() []peer.PeerOption {
	return []peer.PeerOption{peer.WithoutNACKResponder()}
}

// subscriberPeerOptions: a subscriber's PeerConnection receives no media (peer.WithSendOnly), and
// with allocation.respond_nack its down-tracks answer NACKs from the publishers' packet caches, so
// Pion's responder is left out.
func (p *Plugin) subscriberPeerOptions() []peer.PeerOption {
	opts := []peer.PeerOption{peer.WithSendOnly()}
	if p.cfg.Allocation.RespondNACK {
		opts = append(opts, peer.WithoutNACKResponder())
	}
	return opts
}

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata VideoRoom plugin",
		Author:        "strata",
		Description:   "An SFU with per-subscriber bandwidth estimation and simulcast/SVC layer allocation, with Janus's VideoRoom API.",
		VersionString: "0.1.0",
		Version:       1,
	}
}

// Attach creates the state of a newly attached handle.
func (p *Plugin) Attach(h plugin.Handle) (plugin.Session, error) {
	s := newSession(p, h)
	p.sessions.Add(s)
	go s.work()
	return s, nil
}

// Destroy detaches every session and stops every forwarder (server shutdown).
func (p *Plugin) Destroy() {
	for _, s := range p.sessions.All() {
		s.Detach()
	}
	p.net.close()
	if p.cl != nil {
		p.cl.close()
	}
}

// AdminMessage answers the admin API's message_plugin with the synchronous requests.
func (p *Plugin) AdminMessage(_ context.Context, request json.RawMessage) any {
	b, rerr := parseBody(request)
	if rerr != nil {
		return rerr.data()
	}
	name, _, rerr := b.str("request", true)
	if rerr != nil {
		return rerr.data()
	}
	if _, ok := syncRequests[name]; !ok {
		return errorf(ErrInvalidRequest, "Unknown request '%s'", name).data()
	}
	data, rerr := p.syncRequest(name, b)
	if rerr != nil {
		return rerr.data()
	}
	return data
}

func (p *Plugin) forget(s *session) { p.sessions.Remove(s) }

func (p *Plugin) room(id uint64) (*room, *requestError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.rooms[id]
	if !ok {
		return nil, errorf(ErrNoSuchRoom, "No such room (%d)", id)
	}
	return r, nil
}

func (p *Plugin) roomList() []*room {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*room, 0, len(p.rooms))
	for _, r := range p.rooms {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
