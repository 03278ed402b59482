// Package relay carries media between the nodes of a cluster (docs/CLUSTER.md): a feed published
// on one node (the origin) is received on another (the edge) into ordinary sfu.Receivers, which the
// edge's DownTracks and allocators use as they use a local publisher's.
//
// One PeerConnection per node pair is the link: ICE and DTLS-SRTP negotiated once through the
// cluster's node-to-node requests (the node with the smaller id offers). Streams are then added
// and removed by SSRC with Pion's ORTC sender and receiver on the link's DTLS transport, never by
// renegotiation: the edge asks the origin for the feed's descriptor (codecs, simulcast, layers,
// extensions), opens a receiver per layer on SSRCs it picks, and only then asks the origin to send.
// The PeerConnection (not a bare ORTC DTLSTransport) holds the transport because Pion's ORTC
// transport never accepts a stream nobody opened: one stray packet on such an SSRC (a late
// packet after a release) would stall its whole SRTP session, where the PeerConnection drops it.
//
// Every simulcast layer and the whole SVC stream cross the link; each feed crosses a link once,
// whatever the number of its importers on the edge (imports are reference-counted). The origin
// rewrites each packet's SSRC, payload type and the header extensions strata forwards to the
// link's; sequence numbers and timestamps cross unchanged, so the edge's NACKs (sent by the edge
// for losses on the link) are answered from the origin Receiver's packet cache, and the edge's
// keyframe requests go to the origin Receiver's RequestKeyframe, whose per-layer rate limit merges
// those of every edge and local subscriber.
//
// A feed's data stream (a videoroom publisher's data channels) crosses on a data channel of the
// link's SCTP association, negotiated by id as the media by SSRC (data.go).
//
// On networks between nodes that are trusted, links can carry plain RTP instead (Config.Transport
// "rtp", plain.go): one UDP socket per node, the same descriptors, SSRCs, NACKs and keyframe
// requests, no ICE, DTLS or SRTP, and no data streams.
package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Signaler carries the relay's requests between nodes; cluster.View satisfies it.
type Signaler interface {
	// Call sends req to node's handler of path and decodes the answer into resp (nil: ignored).
	Call(ctx context.Context, node, path string, req, resp any) error
	// Handle serves path: f gets the calling node's id and the request body.
	Handle(path string, f func(ctx context.Context, from string, req json.RawMessage) (any, error))
}

// Paths of the relay's node-to-node requests.
const (
	pathLink      = "/relay/link"      // the dialler's offer → the answer
	pathDial      = "/relay/dial"      // "dial me": the larger id asks the smaller one for a link
	pathDescribe  = "/relay/describe"  // feed id → FeedDescriptor
	pathSubscribe = "/relay/subscribe" // the edge's SSRCs → the origin starts sending
	pathRelease   = "/relay/release"   // the edge's last importer left
	pathGone      = "/relay/gone"      // the origin unexported the feed
)

// Config configures a node's relay (cluster.relay in configs/strata.yaml).
type Config struct {
	// NodeID is this node's id in the cluster.
	NodeID string
	// Address is the IP the link's host candidates carry: the node's own address on the network
	// between nodes (only its interface is used), or its public address behind a 1:1 NAT. Empty:
	// every interface's.
	Address string
	// PortMin and PortMax bound the UDP ports of the links, one port per link (0: any). When they
	// are the same port, every link shares that one socket.
	PortMin, PortMax uint16
	// ConnectTimeout bounds the setting up of a link (10 s when 0).
	ConnectTimeout time.Duration
	// FailedTimeout: a link that hears nothing from its peer for this long is down, and every feed
	// it carried is gone (3 s when 0, the cluster's default node_ttl).
	FailedTimeout time.Duration
	// NACKInterval is how often the edge asks again for packets still missing (50 ms when 0).
	NACKInterval time.Duration
	// Transport is "srtp" (the default: DTLS-SRTP over ICE) or "rtp": plain RTP on one UDP
	// socket (Address and the first free port of PortMin-PortMax), for networks between nodes
	// that are trusted. Every node of a cluster must use the same.
	Transport string
	// Data bounds what the origin holds back of a data stream's messages for one link whose SCTP
	// send buffer is full (sfu.DefaultDataSinkConfig when zero): beyond it they are dropped and
	// counted, never stalling the publisher.
	Data sfu.DataSinkConfig
	// Log gets the relay's and Pion's messages (nil: discarded).
	Log *slog.Logger
}

func (c *Config) defaults() {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.FailedTimeout <= 0 {
		c.FailedTimeout = 3 * time.Second
	}
	if c.NACKInterval <= 0 {
		c.NACKInterval = 50 * time.Millisecond
	}
	if c.Data == (sfu.DataSinkConfig{}) {
		c.Data = sfu.DefaultDataSinkConfig()
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Relay is one node's end of every link: it exports this node's feeds and imports other nodes'.
type Relay struct {
	cfg      Config
	instance string // this run of the node (a restarted node's links are new)
	sig      Signaler
	api      *webrtc.API
	mux      io.Closer // the links' shared UDP socket (one configured port), or nil
	// plain is the socket of plain RTP links (transport rtp), nil with DTLS-SRTP.
	plain *plainSocket
	log   *slog.Logger

	mu       sync.Mutex
	closed   bool
	links    map[string]*link
	exports  map[string]*export
	imports  map[importKey]*sharedImport
	gen      uint64
	nextSSRC uint32
	// nextDataChannel is the last data channel id picked, without its parity bit; dataChannels
	// those in use, by origin (data.go).
	nextDataChannel uint32
	dataChannels    map[string]map[uint16]bool

	stop       chan struct{}
	done       chan struct{}
	c          counters
	dataTotals dataTotals

	// dropIncoming, when set (tests), drops an incoming link packet it returns true for.
	dropIncoming atomic.Pointer[func(ssrc uint32, seq uint16) bool]
}

type counters struct {
	packetsSent, packetsReceived, retransmitted atomic.Uint64
	nacksSent, nacksReceived                    atomic.Uint64
	keyframesAsked, keyframesRequested          atomic.Uint64
	// dataReceived counts the data messages received from origins (dataTotals those sent).
	dataReceived atomic.Uint64
}

// New creates a node's relay and registers its handlers with signal.
func New(cfg Config, signal Signaler) (*Relay, error) {
	cfg.defaults()
	if cfg.NodeID == "" {
		return nil, errors.New("relay: the node id is required")
	}
	apiCfg := cfg
	if cfg.Transport == "rtp" {
		apiCfg.PortMin, apiCfg.PortMax = 0, 0 // the plain socket takes the ports (no ICE)
	}
	api, mux, err := newAPI(apiCfg)
	if err != nil {
		return nil, err
	}
	var plain *plainSocket
	switch cfg.Transport {
	case "", "srtp":
	case "rtp":
		if plain, err = listenPlain(cfg); err != nil {
			return nil, err
		}
		mux = plain
	default:
		closeMux(mux)
		return nil, fmt.Errorf("relay: transport %q is neither srtp nor rtp", cfg.Transport)
	}
	r := &Relay{
		cfg: cfg, instance: newInstance(), sig: signal, api: api, mux: mux, plain: plain, log: cfg.Log.With("component", "relay"),
		links: map[string]*link{}, exports: map[string]*export{}, imports: map[importKey]*sharedImport{}, dataChannels: map[string]map[uint16]bool{},
		nextSSRC: ssrcBase(), stop: make(chan struct{}), done: make(chan struct{}),
	}
	signal.Handle(pathLink, r.handleLink)
	signal.Handle(pathDial, r.handleDial)
	signal.Handle(pathDescribe, r.handleDescribe)
	signal.Handle(pathSubscribe, r.handleSubscribe)
	signal.Handle(pathRelease, r.handleRelease)
	signal.Handle(pathGone, r.handleGone)
	go r.nackLoop()
	return r, nil
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("relay: closed")

// Close ends every link: the importers of every feed this node imported are told it is gone.
func (r *Relay) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	links := make([]*link, 0, len(r.links))
	for _, l := range r.links {
		links = append(links, l)
	}
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	for _, l := range links {
		r.linkDown(l, ErrClosed)
	}
	closeMux(r.mux)
}

// LinkStats describes one link.
type LinkStats struct {
	Peer    string `json:"peer"`
	State   string `json:"state"`
	Exports int    `json:"exports"` // feeds this node sends on it
	Imports int    `json:"imports"` // feeds this node receives on it
}

// Stats is what the admin API and the metrics show of the relay.
type Stats struct {
	Links   []LinkStats `json:"links"`
	Exports int         `json:"exports"` // feeds this node offers
	Imports int         `json:"imports"` // feeds this node receives
	// Packets sent to and received from other nodes (retransmissions included).
	PacketsSent     uint64 `json:"packets_sent"`
	PacketsReceived uint64 `json:"packets_received"`
	// NACKsSent counts the packets this node asked again for, NACKsReceived those asked of it,
	// Retransmitted those it sent again from its cache.
	NACKsSent     uint64 `json:"nacks_sent"`
	NACKsReceived uint64 `json:"nacks_received"`
	Retransmitted uint64 `json:"retransmitted"`
	// KeyframeRequestsSent went to origins; KeyframeRequestsReceived came from edges (before the
	// origin Receiver's rate limit merged them).
	KeyframeRequestsSent     uint64 `json:"keyframe_requests_sent"`
	KeyframeRequestsReceived uint64 `json:"keyframe_requests_received"`
	// Data channel messages sent to and received from other nodes; DataDropped those a link
	// could not take (its queue full) and the origin dropped.
	DataSent     uint64 `json:"data_sent"`
	DataReceived uint64 `json:"data_received"`
	DataDropped  uint64 `json:"data_dropped"`
}

// Stats returns the relay's counters and links.
func (r *Relay) Stats() Stats {
	r.mu.Lock()
	s := Stats{Exports: len(r.exports), Imports: len(r.imports)}
	for peer, l := range r.links {
		ls := LinkStats{Peer: peer, State: l.state()}
		for _, e := range r.exports {
			if e.outs[l] != nil {
				ls.Exports++
			}
		}
		for _, si := range r.imports {
			if si.link == l {
				ls.Imports++
			}
		}
		s.Links = append(s.Links, ls)
	}
	r.mu.Unlock()
	s.PacketsSent, s.PacketsReceived = r.c.packetsSent.Load(), r.c.packetsReceived.Load()
	s.NACKsSent, s.NACKsReceived, s.Retransmitted = r.c.nacksSent.Load(), r.c.nacksReceived.Load(), r.c.retransmitted.Load()
	s.KeyframeRequestsSent, s.KeyframeRequestsReceived = r.c.keyframesAsked.Load(), r.c.keyframesRequested.Load()
	s.DataSent, s.DataDropped = r.dataTotals.totals()
	s.DataReceived = r.c.dataReceived.Load()
	return s
}

// PeerGone takes the link with node down at once (the cluster's membership says the node is
// gone: its record lapsed), without waiting for ICE to notice: the feeds imported from it are
// gone, those exported to it stop. Wire it to cluster.View.Watch's NodeGone.
func (r *Relay) PeerGone(node string) {
	r.mu.Lock()
	l := r.links[node]
	r.mu.Unlock()
	if l != nil {
		r.linkDown(l, fmt.Errorf("relay: node %s is gone", node))
	}
}

// linkDown removes a link that failed or closed: the feeds imported over it are gone (their
// importers are told), those exported over it stop.
func (r *Relay) linkDown(l *link, cause error) {
	l.finish(cause)
	if l.down.Swap(true) {
		return
	}
	r.mu.Lock()
	if r.links[l.peer] == l {
		delete(r.links, l.peer)
	}
	var gone []*sharedImport
	for _, si := range r.imports {
		if si.link == l {
			gone = append(gone, si)
		}
	}
	var outs []*feedOut
	for _, e := range r.exports {
		if fo := e.outs[l]; fo != nil {
			delete(e.outs, l)
			outs = append(outs, fo)
		}
	}
	r.mu.Unlock()
	for _, si := range gone {
		si.end(true)
	}
	for _, fo := range outs {
		fo.stop()
	}
	l.close()
	if !errors.Is(cause, ErrClosed) {
		r.log.Info("relay link down", "peer", l.peer, "cause", cause)
	}
}

// allocSSRC returns an SSRC this node has not used for a stream it receives. The node with the
// smaller id of a pair takes SSRCs with the top bit clear, the other with it set (ownsSSRC), so
// the two directions of a link never collide.
func (r *Relay) allocSSRC(peer string) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextSSRC++
	if r.nextSSRC&0x7fffffff == 0 {
		r.nextSSRC++ // never 0
	}
	s := r.nextSSRC & 0x7fffffff
	if r.cfg.NodeID > peer {
		s |= 0x80000000
	}
	return s
}

// ssrcBase starts a node's SSRCs at a point that differs between restarts of the node, so that a
// late packet of an earlier run is not taken for one of the new streams.
func ssrcBase() uint32 { return uint32(time.Now().UnixNano()) & 0x7fff0000 }

// ownsSSRC reports whether ssrc is in the half of the SSRC space from picks on a link with to.
func ownsSSRC(from, to string, ssrc uint32) bool {
	return ssrc != 0 && (ssrc&0x80000000 != 0) == (from > to)
}

// newInstance names this run of the node.
func newInstance() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// decode unmarshals a request body, with an error that names the request.
func decode(path string, b json.RawMessage, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("relay: malformed %s request: %w", path, err)
	}
	return nil
}

// ConfigFrom is the relay's part of the cluster configuration (cluster.relay, validated by
// package config) for node nodeID.
func ConfigFrom(c config.ClusterRelay, nodeID string, log *slog.Logger) (Config, error) {
	lo, hi, err := c.PortRange()
	if err != nil {
		return Config{}, fmt.Errorf("cluster.relay.ports: %w", err)
	}
	return Config{NodeID: nodeID, Address: c.Address, PortMin: lo, PortMax: hi, Transport: c.Transport, Log: log}, nil
}
