package peer

import (
	"strings"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"
)

// dataCloseWait bounds how long Close waits for the remote peer to close the data channels.
const dataCloseWait = 200 * time.Millisecond

// dataChannels are the channels a plugin asked the Peer to close before the PeerConnection: Pion
// ends the SCTP association with an ABORT, which browsers report as an error on every channel still
// open ("User-Initiated Abort", which janus.js logs); Janus's usrsctp shuts the association down
// instead. Closing each channel first (an SCTP stream reset, which the browser answers by closing
// its side) lets the browser see plain closes, as with Janus.
type dataChannels struct {
	mu  sync.Mutex
	dcs []*webrtc.DataChannel
}

// TrackDataChannel has Close close dc (created by the plugin or opened by the remote peer) before
// the PeerConnection.
func (p *Peer) TrackDataChannel(dc *webrtc.DataChannel) {
	p.dcs.mu.Lock()
	defer p.dcs.mu.Unlock()
	p.dcs.dcs = append(p.dcs.dcs, dc)
}

// closeDataChannels closes the open tracked channels and waits, at most dataCloseWait, for the
// remote peer to close them too.
func (p *Peer) closeDataChannels() {
	p.dcs.mu.Lock()
	dcs := p.dcs.dcs
	p.dcs.dcs = nil
	p.dcs.mu.Unlock()
	var open []*webrtc.DataChannel
	for _, dc := range dcs {
		if dc.ReadyState() == webrtc.DataChannelStateOpen {
			_ = dc.Close()
			open = append(open, dc)
		}
	}
	deadline := time.Now().Add(dataCloseWait)
	for _, dc := range open {
		for dc.ReadyState() != webrtc.DataChannelStateClosed && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// ChannelService serves the data channels whose label starts with Prefix on every PeerConnection
// of a Factory, whatever plugin owns it (the low-priority transfers: internal/lowprio/service).
// Pion has one OnDataChannel handler per PeerConnection, so the Peer owns it and dispatches: the
// service's channels to Serve, the others to the plugin's handler (Peer.OnDataChannel).
type ChannelService struct {
	Prefix string
	// Serve takes a channel the remote peer opened; it is called on Pion's goroutine and must not
	// block. The Peer closes the channel before its PeerConnection.
	Serve func(p *Peer, dc *webrtc.DataChannel)
}

// WithChannelService adds a service for the data channels of a label prefix (see ChannelService).
func WithChannelService(s ChannelService) Option {
	return func(o *factoryOptions) { o.services = append(o.services, s) }
}

// OnDataChannel installs the plugin's handler for data channels the remote peer opens, except those
// a ChannelService takes. Set it before negotiating. Channels arriving while no handler is set are
// only closed with the Peer.
func (p *Peer) OnDataChannel(f func(*webrtc.DataChannel)) {
	p.onDataChannel.Store(&f)
}

// dataChannelArrived dispatches a channel the remote peer opened.
func (p *Peer) dataChannelArrived(dc *webrtc.DataChannel) {
	label := dc.Label()
	for _, s := range p.services {
		if strings.HasPrefix(label, s.Prefix) {
			p.TrackDataChannel(dc)
			s.Serve(p, dc)
			return
		}
	}
	if f := p.onDataChannel.Load(); f != nil && *f != nil {
		(*f)(dc)
		return
	}
	p.TrackDataChannel(dc)
}
