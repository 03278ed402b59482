package streaming

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
	"github.com/strata-rtc/strata/internal/udpbatch"
)

// Plugin is janus.plugin.streaming. Create it with New.
type Plugin struct {
	cfg         config.Streaming
	rec         record.SessionOptions // playable recordings beside the .mjr files, or not
	alloc       sfu.AllocatorConfig
	respondNACK bool
	batcher     udpbatch.Batcher
	log         *slog.Logger
	// census counts every viewer's congestion, so that a cause they share pauses no one's video.
	census *sfu.Census

	mu  sync.Mutex
	mps map[uint64]*mountpoint
	// remote are the other nodes' mountpoints (cluster.go), listed and watched here; a local
	// mountpoint with the same id wins.
	remote map[uint64]*mountpoint
	cl     *clusterNode // nil: one node

	sessions plugin.SessionSet[*session]
}

// New creates the plugin with the mountpoints of the configuration. Viewers are allocated layers
// with alloc (the videoroom's allocation section); batcher groups a fan-out's packets (nil: none).
// A mountpoint of the configuration that cannot be opened is logged and left out, as Janus does.
func New(cfg config.Streaming, alloc config.LayerAllocation, rec record.SessionOptions, batcher udpbatch.Batcher, log *slog.Logger, opts ...Option) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{cfg: cfg, rec: rec, alloc: alloc.AllocatorConfig, respondNACK: alloc.RespondNACK, batcher: batcher, log: log,
		census: sfu.NewCensus(), mps: map[uint64]*mountpoint{}, remote: map[uint64]*mountpoint{}}
	for _, o := range opts {
		o(p)
	}
	for _, m := range cfg.Mountpoints {
		if err := p.createFromConfig(m); err != nil {
			log.Error("streaming mountpoint of the configuration left out", "id", m.ID, "err", err.Reason)
		}
	}
	if p.cl != nil {
		p.cl.start()
	}
	return p
}

// createFromConfig reads a configured mountpoint as a create request, so that it is checked by the
// same code as one created through the API.
func (p *Plugin) createFromConfig(m config.StreamingMountpoint) *Error {
	raw, err := json.Marshal(m)
	if err != nil {
		return errorf(ErrUnknown, "%v", err)
	}
	var fields map[string]any
	_ = json.Unmarshal(raw, &fields)
	fields["request"] = "create"
	raw, _ = json.Marshal(fields)
	req, rerr := Parse(raw)
	if rerr != nil {
		return rerr
	}
	c := req.(*Create)
	if rerr := c.CheckSource(); rerr != nil {
		return rerr
	}
	mp, rerr := p.create(c, true)
	if rerr == nil {
		// Files every node has stay local; a mountpoint fed here (ports, RTSP) is announced.
		mp.announced = p.cl != nil && mp.rtpLive() && len(mp.relayedStreams()) > 0
	}
	return rerr
}

// Package returns "janus.plugin.streaming".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata Streaming plugin",
		Author:        "strata",
		Description:   "One-to-many mountpoints (RTP, files, RTSP) with per-viewer bandwidth estimation and layer allocation, with Janus's Streaming API.",
		VersionString: "0.1.0",
		Version:       1,
	}
}

// Attach creates the state of a newly attached handle.
func (p *Plugin) Attach(h plugin.Handle) (plugin.Session, error) {
	s := newSession(p, h)
	p.sessions.Add(s)
	return s, nil
}

// Destroy detaches every session and closes every mountpoint (server shutdown).
func (p *Plugin) Destroy() {
	if p.cl != nil {
		p.cl.close()
	}
	for _, s := range p.sessions.All() {
		s.Detach()
	}
	p.mu.Lock()
	mps, remote := p.mps, p.remote
	p.mps, p.remote = map[uint64]*mountpoint{}, map[uint64]*mountpoint{}
	p.mu.Unlock()
	for _, mp := range mps {
		mp.close()
	}
	for _, mp := range remote {
		mp.close()
	}
}

// AdminMessage answers the admin API's message_plugin with the synchronous requests.
func (p *Plugin) AdminMessage(_ context.Context, request json.RawMessage) any {
	name, b, err := Decode(request)
	if err != nil {
		return err.Data(Short)
	}
	if Asynchronous(name) {
		return errorf(ErrInvalidReq, "Unknown request '%s'", b.Str("request")).Data(Short)
	}
	return p.handleSync(name, b, request)
}

// viewerPeerOptions: a viewer's PeerConnection receives no media; with allocation.respond_nack
// its down-tracks answer NACKs from the mountpoint's packet caches, so Pion's responder is left
// out.
func (p *Plugin) viewerPeerOptions() []peer.PeerOption {
	opts := []peer.PeerOption{peer.WithSendOnly()}
	if p.respondNACK {
		opts = append(opts, peer.WithoutNACKResponder())
	}
	return opts
}

func (p *Plugin) forget(s *session) { p.sessions.Remove(s) }

// mountpoint returns the mountpoint with this id (nil if none): this node's, or another node's.
func (p *Plugin) mountpoint(id uint64) *mountpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	if mp := p.mps[id]; mp != nil {
		return mp
	}
	return p.remote[id]
}

// localMountpoint returns this node's mountpoint with this id (nil if none).
func (p *Plugin) localMountpoint(id uint64) *mountpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mps[id]
}

// mountpointList lists this node's mountpoints (withRemote: and those of the other nodes), by id.
func (p *Plugin) mountpointList(withRemote bool) []*mountpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*mountpoint, 0, len(p.mps))
	for _, mp := range p.mps {
		if mp != nil { // nil: reserved while its source opens
			out = append(out, mp)
		}
	}
	for id, mp := range p.remote {
		if withRemote && p.mps[id] == nil {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// receiverConfig is what every source's receivers are made with.
func (p *Plugin) receiverConfig() sfu.ReceiverConfig {
	return sfu.ReceiverConfig{Batcher: p.batcher}
}
