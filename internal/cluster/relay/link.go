package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/dtls/v3"
	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
)

// link is the transport between this node and one other: a PeerConnection whose only m-line is a
// data channel's, negotiated once; streams use its DTLS transport through ORTC senders and
// receivers.
type link struct {
	peer  string
	pc    *webrtc.PeerConnection
	dtls  *webrtc.DTLSTransport // set once connected
	plain *plainLink            // instead of pc, on a plain RTP link (plain.go)

	once  sync.Once
	ready chan struct{} // closed when connected or down
	err   error         // why it is down (set before ready closes)
	down  atomic.Bool   // taken down (Relay.linkDown)
	// peerInstance identifies the peer's run (Relay.instance): a node that restarted under the
	// same id asks for a link with a new one, and the old link is stale.
	peerInstance string
}

// sdpMessage is the body of a link request and its answer: the description and the sender's
// instance.
type sdpMessage struct {
	SDP      string `json:"sdp,omitempty"`
	Instance string `json:"instance"`
	// Plain is the sender's plain RTP socket ("ip:port") on a plain link, instead of SDP.
	Plain string `json:"plain,omitempty"`
}

// dialRequest asks the node with the smaller id for a link.
type dialRequest struct {
	Instance string `json:"instance"`
}

// newLink creates this node's side of a link with peer. The caller registers it in r.links.
func (r *Relay) newLink(peer string) (*link, error) {
	if r.plain != nil {
		return &link{peer: peer, ready: make(chan struct{})}, nil
	}
	pc, err := r.api.NewPeerConnection(webrtc.Configuration{BundlePolicy: webrtc.BundlePolicyMaxBundle})
	if err != nil {
		return nil, fmt.Errorf("relay: link to %s: %w", peer, err)
	}
	l := &link{peer: peer, pc: pc, ready: make(chan struct{})}
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		switch s {
		case webrtc.PeerConnectionStateConnected:
			if sctp := pc.SCTP(); sctp != nil {
				l.dtls = sctp.Transport()
			}
			l.finish(nil)
		case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
			go r.linkDown(l, fmt.Errorf("relay: link to %s %s", peer, s))
		}
	})
	return l, nil
}

// finish marks the link connected (nil) or down; the first call counts.
func (l *link) finish(err error) {
	l.once.Do(func() {
		if err == nil && l.dtls == nil && l.plain == nil {
			err = fmt.Errorf("relay: link to %s has no DTLS transport", l.peer)
		}
		l.err = err
		close(l.ready)
	})
}

// wait returns once the link is connected (nil) or down.
func (l *link) wait(ctx context.Context) error {
	select {
	case <-l.ready:
		return l.err
	case <-ctx.Done():
		return fmt.Errorf("relay: link to %s: %w", l.peer, ctx.Err())
	}
}

// ensureLink returns the connected link with peer, setting it up if there is none: the node with
// the smaller id offers; the other asks it to (pathDial), so that two nodes importing from each
// other at once still end up with one link.
func (r *Relay) ensureLink(ctx context.Context, peer string) (*link, error) {
	if peer == r.cfg.NodeID || peer == "" {
		return nil, fmt.Errorf("relay: no link to %q from %q", peer, r.cfg.NodeID)
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ConnectTimeout)
	defer cancel()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if l := r.links[peer]; l != nil {
		r.mu.Unlock()
		return l, l.wait(ctx)
	}
	if r.cfg.NodeID > peer {
		r.mu.Unlock()
		if err := r.sig.Call(ctx, peer, pathDial, dialRequest{Instance: r.instance}, nil); err != nil {
			return nil, fmt.Errorf("relay: asking %s for a link: %w", peer, err)
		}
		r.mu.Lock()
		l := r.links[peer]
		r.mu.Unlock()
		if l == nil {
			return nil, fmt.Errorf("relay: %s did not set up a link", peer)
		}
		return l, l.wait(ctx)
	}
	l, err := r.newLink(peer)
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	r.links[peer] = l
	r.mu.Unlock()
	if err := r.offer(ctx, l); err != nil {
		r.linkDown(l, err)
		return nil, err
	}
	return l, l.wait(ctx)
}

// offer negotiates l as the offerer.
func (r *Relay) offer(ctx context.Context, l *link) error {
	if r.plain != nil {
		return r.offerPlain(ctx, l)
	}
	if _, err := l.pc.CreateDataChannel("relay", nil); err != nil {
		return fmt.Errorf("relay: link to %s: %w", l.peer, err)
	}
	offer, err := l.pc.CreateOffer(nil)
	if err != nil {
		return fmt.Errorf("relay: link to %s: %w", l.peer, err)
	}
	local, err := gathered(ctx, l.pc, offer)
	if err != nil {
		return fmt.Errorf("relay: link to %s: %w", l.peer, err)
	}
	var answer sdpMessage
	if err := r.sig.Call(ctx, l.peer, pathLink, sdpMessage{SDP: local, Instance: r.instance}, &answer); err != nil {
		return fmt.Errorf("relay: link to %s: %w", l.peer, err)
	}
	r.mu.Lock()
	l.peerInstance = answer.Instance
	r.mu.Unlock()
	if answer.Plain != "" {
		return fmt.Errorf("relay: %s links with plain RTP, this node with DTLS-SRTP", l.peer)
	}
	if err := l.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		return fmt.Errorf("relay: link to %s: bad answer: %w", l.peer, err)
	}
	return nil
}

// gathered sets desc as the local description and returns it with every candidate (the link does
// not trickle: one request and its answer set it up).
func gathered(ctx context.Context, pc *webrtc.PeerConnection, desc webrtc.SessionDescription) (string, error) {
	done := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(desc); err != nil {
		return "", err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return pc.LocalDescription().SDP, nil
}

// handleLink answers a link offer from a node with a smaller id. A link it replaces (the peer
// restarted, or lost it first) goes down.
func (r *Relay) handleLink(ctx context.Context, from string, body json.RawMessage) (any, error) {
	if from >= r.cfg.NodeID {
		return nil, fmt.Errorf("relay: %s offered a link, but %s offers to larger ids", from, r.cfg.NodeID)
	}
	var offer sdpMessage
	if err := decode(pathLink, body, &offer); err != nil {
		return nil, err
	}
	if (offer.Plain != "") != (r.plain != nil) {
		return nil, fmt.Errorf("relay: %s and %s disagree on the transport (cluster.relay.transport)", from, r.cfg.NodeID)
	}
	l, err := r.newLink(from)
	if err != nil {
		return nil, err
	}
	l.peerInstance = offer.Instance
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		l.close()
		return nil, ErrClosed
	}
	old := r.links[from]
	r.links[from] = l
	r.mu.Unlock()
	if old != nil {
		r.linkDown(old, fmt.Errorf("relay: %s set up a new link", from))
	}
	if r.plain != nil {
		if err := l.connectPlain(r.plain, offer.Plain); err != nil {
			r.linkDown(l, err)
			return nil, err
		}
		return sdpMessage{Instance: r.instance, Plain: r.plain.addr}, nil
	}
	answer, err := r.answer(ctx, l, offer.SDP)
	if err != nil {
		r.linkDown(l, err)
		return nil, err
	}
	go func() { // a link that never connects is removed
		ctx, cancel := context.WithTimeout(context.Background(), r.cfg.ConnectTimeout)
		defer cancel()
		if err := l.wait(ctx); err != nil {
			r.linkDown(l, err)
		}
	}()
	return sdpMessage{SDP: answer, Instance: r.instance}, nil
}

// offerPlain sets up a plain RTP link: the two sockets' addresses are exchanged, and that is all.
func (r *Relay) offerPlain(ctx context.Context, l *link) error {
	var answer sdpMessage
	if err := r.sig.Call(ctx, l.peer, pathLink, sdpMessage{Instance: r.instance, Plain: r.plain.addr}, &answer); err != nil {
		return fmt.Errorf("relay: link to %s: %w", l.peer, err)
	}
	r.mu.Lock()
	l.peerInstance = answer.Instance
	r.mu.Unlock()
	return l.connectPlain(r.plain, answer.Plain)
}

func (l *link) connectPlain(s *plainSocket, addr string) error {
	pl, err := s.connect(addr)
	if err != nil {
		return err
	}
	l.plain = pl
	l.finish(nil)
	return nil
}

// close releases the link's transport.
func (l *link) close() {
	if l.pc != nil {
		_ = l.pc.Close()
	}
	if l.plain != nil {
		l.plain.disconnect()
	}
}

// state names the link's state for the stats.
func (l *link) state() string {
	if l.pc == nil {
		if l.up() {
			return "plain"
		}
		return "new"
	}
	return l.pc.ConnectionState().String()
}

// up reports whether the link is connected.
func (l *link) up() bool {
	select {
	case <-l.ready:
		return l.err == nil
	default:
		return false
	}
}

// writeRTCP sends feedback to the peer.
func (l *link) writeRTCP(pkts []rtcp.Packet) error {
	if l.plain != nil {
		return l.plain.writeRTCP(pkts)
	}
	return l.pc.WriteRTCP(pkts)
}

func (r *Relay) answer(ctx context.Context, l *link, offer string) (string, error) {
	if err := l.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", fmt.Errorf("relay: bad link offer from %s: %w", l.peer, err)
	}
	answer, err := l.pc.CreateAnswer(nil)
	if err != nil {
		return "", fmt.Errorf("relay: link to %s: %w", l.peer, err)
	}
	return gathered(ctx, l.pc, answer)
}

// handleDial sets up a link with a node of a larger id that asked for one. A link with an earlier
// run of that node (it restarted before this one noticed the old link fail) is taken down first.
func (r *Relay) handleDial(ctx context.Context, from string, body json.RawMessage) (any, error) {
	if from <= r.cfg.NodeID {
		return nil, fmt.Errorf("relay: %s asked %s to dial, but it offers itself", from, r.cfg.NodeID)
	}
	var req dialRequest
	if err := decode(pathDial, body, &req); err != nil {
		return nil, err
	}
	r.mu.Lock()
	old := r.links[from]
	stale := old != nil && old.peerInstance != "" && old.peerInstance != req.Instance
	r.mu.Unlock()
	if stale {
		r.linkDown(old, fmt.Errorf("relay: %s restarted", from))
	}
	_, err := r.ensureLink(ctx, from)
	return struct{}{}, err
}

// linkPT is a codec's payload type on every link: one per codec strata forwards, whatever the
// publisher negotiated (the descriptor carries the publisher's format).
func linkPT(c media.Codec) uint8 { return 96 + uint8(c) }

// newAPI turns the relay's configuration into Pion settings: host candidates on the configured
// address and ports, nothing else (no mDNS, STUN or TURN between nodes), no interceptors (the
// relay sends its own NACKs and keyframe requests, and Pion's NACK generator allocates per
// packet), and a media engine with each codec under its link payload type.
//
// SRTP replay protection is off: a retransmission travels on its stream's own SSRC with its
// original sequence number (there is no RTX on a link), and Pion's replay window refused those
// even when set to thousands of packets. A replayed packet gains an attacker nothing here: the
// link is authenticated by DTLS between the cluster's nodes, and the edge's Receiver drops
// duplicates itself (it must: publishers' probes resend packets too).
func newAPI(cfg Config) (*webrtc.API, io.Closer, error) {
	var se webrtc.SettingEngine
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6})
	se.SetICETimeouts(cfg.FailedTimeout/2, cfg.FailedTimeout, time.Second/2)
	se.DisableSRTPReplayProtection(true)
	se.SetSRTPProtectionProfiles(dtls.SRTP_AEAD_AES_128_GCM, dtls.SRTP_AES128_CM_HMAC_SHA1_80)
	se.LoggerFactory = peer.PionLogs(cfg.Log)
	// keep says which local addresses the links use: the configured one, or any but link-local.
	keep := func(x net.IP) bool { return !x.IsLinkLocalUnicast() }
	if cfg.Address != "" {
		ip := net.ParseIP(cfg.Address)
		if ip == nil {
			return nil, nil, fmt.Errorf("relay: address %q is not an IP address", cfg.Address)
		}
		se.SetIncludeLoopbackCandidate(ip.IsLoopback())
		if localIP(ip) {
			keep = func(x net.IP) bool { return x.Equal(ip) }
		} else if err := se.SetICEAddressRewriteRules(webrtc.ICEAddressRewriteRule{
			External: []string{cfg.Address}, AsCandidateType: webrtc.ICECandidateTypeHost, Mode: webrtc.ICEAddressRewriteReplace,
		}); err != nil {
			return nil, nil, fmt.Errorf("relay: address %s: %w", cfg.Address, err)
		}
	}
	se.SetIPFilter(keep)
	var mux io.Closer
	switch {
	case cfg.PortMin != 0 && cfg.PortMin == cfg.PortMax: // one port: every link on one socket
		opts := []ice.UDPMuxFromPortOption{
			ice.UDPMuxFromPortWithNetworks(ice.NetworkTypeUDP4, ice.NetworkTypeUDP6),
			ice.UDPMuxFromPortWithIPFilter(keep),
		}
		if ip := net.ParseIP(cfg.Address); ip != nil && ip.IsLoopback() {
			opts = append(opts, ice.UDPMuxFromPortWithLoopback())
		}
		m, err := ice.NewMultiUDPMuxFromPort(int(cfg.PortMin), opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("relay: port %d: %w", cfg.PortMin, err)
		}
		se.SetICEUDPMux(m)
		mux = m
	case cfg.PortMin != 0 || cfg.PortMax != 0: // a range: one port per link
		if err := se.SetEphemeralUDPPortRange(cfg.PortMin, cfg.PortMax); err != nil {
			return nil, nil, fmt.Errorf("relay: ports %d-%d: %w", cfg.PortMin, cfg.PortMax, err)
		}
	}
	me := &webrtc.MediaEngine{}
	for c := media.CodecOpus; c <= media.CodecH265; c++ {
		kind := webrtc.RTPCodecTypeAudio
		if c.IsVideo() {
			kind = webrtc.RTPCodecTypeVideo
		}
		p := webrtc.RTPCodecParameters{RTPCodecCapability: media.Capability(c, ""), PayloadType: webrtc.PayloadType(linkPT(c))}
		if err := me.RegisterCodec(p, kind); err != nil {
			closeMux(mux)
			return nil, nil, fmt.Errorf("relay: registering %s: %w", c, err)
		}
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me),
		webrtc.WithInterceptorRegistry(&interceptor.Registry{})), mux, nil
}

func closeMux(mux io.Closer) {
	if mux != nil {
		_ = mux.Close()
	}
}

// localIP reports whether ip is one of this host's addresses.
func localIP(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
