// Package peer is the one place that turns strata's media configuration into Pion settings and wraps a
// PeerConnection with what the gateway needs: Janus-style events (webrtcup, media, slowlink, hangup),
// half-trickle answers, remote trickle candidates and the statistics shown by the admin API.
//
// A Factory holds what all PeerConnections share (settings, codecs, the UDP/TCP mux sockets); each
// Peer owns one PeerConnection. Plugins use Peer.PC for tracks and data channels, but install their
// track and data channel handlers with Peer.OnTrack and Peer.OnDataChannel (the Peer keeps Pion's
// OnTrack, OnDataChannel, OnICECandidate and state callbacks).
package peer

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/interceptor/pkg/stats"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/pcap"
	"github.com/strata-rtc/strata/internal/sched"
	"github.com/strata-rtc/strata/internal/sfu/policy"
	"github.com/strata-rtc/strata/internal/udpbatch"
)

// Hooks are the callbacks the gateway installs on a Peer. Any may be nil. They are called from Pion's
// goroutines and must not block.
type Hooks struct {
	// OnUp fires once, when ICE is connected and DTLS is done (Janus's `webrtcup`).
	OnUp func()
	// OnMedia reports that media of a kind started or stopped arriving on an m-line.
	OnMedia func(mid, kind string, receiving bool)
	// OnSlowLink reports sustained loss: uplink means media strata receives.
	OnSlowLink func(mid, kind string, uplink bool, lost int)
	// OnHangup fires once when the PeerConnection fails or closes, with a reason.
	OnHangup func(reason string)
	// OnCandidate is called for each local candidate when full trickle is on; nil c ends gathering.
	OnCandidate func(c *webrtc.ICECandidateInit)
	// OnICEState, OnDTLSState and OnSelectedPair report the ICE connection state, the DTLS
	// transport state (Pion's names) and the selected candidate pair ("local <-> remote", as
	// handle_info words it), for event handlers. Optional.
	OnICEState     func(state string)
	OnDTLSState    func(state string)
	OnSelectedPair func(pair string)
}

// Hang-up reasons, as Janus words them.
const (
	ReasonICEFailed = "ICE failed"
	ReasonDTLSAlert = "DTLS alert"
	ReasonClosed    = "Close PC"
)

// ErrClosed is returned by operations on a Peer that has been closed.
var ErrClosed = errors.New("peer: PeerConnection closed")

// Peer is one WebRTC PeerConnection owned by a handle.
type Peer struct {
	// PC is the Pion PeerConnection; plugins add tracks and handlers to it.
	PC *webrtc.PeerConnection

	hooks       Hooks
	log         *slog.Logger
	engine      webrtc.SettingEngine // this Peer's Pion settings (ReceiveSSRC's receivers use them)
	claims      ssrcClaims           // SSRCs received with ReceiveSSRC
	fullTrickle bool
	lite        bool

	mu             sync.Mutex
	remoteSet      bool
	cands          remoteCandidates
	candidatesDone bool

	onTrack       atomic.Pointer[func(*webrtc.TrackRemote, *webrtc.RTPReceiver)]
	onDataChannel atomic.Pointer[func(*webrtc.DataChannel)]
	services      []ChannelService // the factory's (datachannels.go)
	bweInfo       atomic.Pointer[func() any]
	lowPrioInfo   atomic.Pointer[func() any]
	estimator     atomic.Pointer[Estimator]
	srtp          atomic.Pointer[string]
	capture       atomic.Pointer[pcap.Capture] // start_pcap's file (capture.go); nil: none
	stats         stats.Getter
	counters      *counterSet
	monitor       *monitor
	monitorTimer  *sched.Timer // runs monitor (startMonitor)
	batcher       udpbatch.Batcher
	marks         *udpbatch.Marks
	remap         atomic.Bool
	upOnce        sync.Once
	dcs           dataChannels // closed before the PeerConnection (datachannels.go)
	closeOnce     sync.Once
	closed        chan struct{}
	retire        func() // hands the counters to the factory's totals once closed
}

// Batcher groups writes to the PeerConnections of this Peer's factory that should leave together
// (see Factory.Batcher).
func (p *Peer) Batcher() udpbatch.Batcher { return p.batcher }

// Marks is the DSCP mark table of the peer's sockets (Factory.Marks); nil without one.
func (p *Peer) Marks() *udpbatch.Marks { return p.marks }

// OnTrack installs the handler for incoming tracks. Set it before negotiating. The handler must read
// the track (that is what drives RTCP and statistics); tracks arriving while no handler is set are
// read and discarded by the Peer. The RTCP the remote peer sends about its tracks (sender reports)
// is read by the Peer itself (see readReceiverRTCP): handlers must not read it from the receiver.
func (p *Peer) OnTrack(f func(*webrtc.TrackRemote, *webrtc.RTPReceiver)) {
	p.onTrack.Store(&f)
}

// SetBWEInfo installs the provider of the `bwe` part of Info (the congestion controller's state).
func (p *Peer) SetBWEInfo(f func() any) { p.bweInfo.Store(&f) }

// SetLowPrioInfo installs the provider of the `lowprio` part of Info (the low-priority transfers).
func (p *Peer) SetLowPrioInfo(f func() any) { p.lowPrioInfo.Store(&f) }

// Estimator is the congestion controller's view of the path from strata towards the remote peer,
// fed by the peer's transport-wide congestion control feedback. It is both what the videoroom's
// allocator decides on (sfu.Estimator) and what sends its probe clusters (sfu.Prober).
type Estimator interface {
	// State is the controller's snapshot (for handle_info and logs).
	State() cc.State
	// Path is every signal about the path in one snapshot.
	Path() policy.Path
	// OnUpdate installs a callback called after every feedback message. It runs on the
	// interceptor's goroutine and must not block.
	OnUpdate(func())
	// NextProbe, RequestProbe, BeginProbe, ProbeSent and EndProbe run the controller's probe
	// clusters (sfu.Prober).
	NextProbe() (cc.ProbeCluster, bool)
	RequestProbe(rate cc.Bitrate)
	BeginProbe(id int)
	ProbeSent() (packets, bytes int)
	EndProbe()
}

// SetEstimator installs the estimator of this Peer's outgoing path (the congestion-control
// interceptor does this while the PeerConnection is built).
func (p *Peer) SetEstimator(e Estimator) { p.estimator.Store(&e) }

// Estimator returns the estimator of the path towards the remote peer, or nil when congestion
// control is off.
func (p *Peer) Estimator() Estimator {
	if e := p.estimator.Load(); e != nil {
		return *e
	}
	return nil
}

// Closed is closed when the Peer has been closed.
func (p *Peer) Closed() <-chan struct{} { return p.closed }

// FullTrickle reports whether local candidates go through Hooks.OnCandidate instead of the SDP.
func (p *Peer) FullTrickle() bool { return p.fullTrickle }

// AddRemoteCandidate adds a trickled candidate from the client. Candidates that arrive before the
// remote description (Janus clients trickle while the offer is still with the plugin) are queued and
// applied once it is set. An empty candidate string means end of candidates. Within the limits
// (see Limits) a candidate is refused with ErrCandidateLimit; once ICE is connected it is ignored
// with ErrICECompleted, and one of an earlier ICE generation with ErrStaleCandidate. A candidate
// whose transport address ICE already has is accepted and not added again.
func (p *Peer) AddRemoteCandidate(c webrtc.ICECandidateInit) error {
	if p.isClosed() {
		return ErrClosed
	}
	if c.Candidate == "" {
		p.RemoteCandidatesDone()
		return nil
	}
	key, ufrag, err := parseCandidate(c.Candidate)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.remoteSet {
		return p.cands.queue(c, key)
	}
	return p.addLocked(c, key, ufrag)
}

// RemoteCandidatesDone records that the client finished trickling ({"completed": true}).
func (p *Peer) RemoteCandidatesDone() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.candidatesDone = true
}

// Close tears the PeerConnection down and fires Hooks.OnHangup(reason), once however often and from
// wherever it is called. It returns when the PeerConnection is closed.
func (p *Peer) Close(reason string) {
	p.closeOnce.Do(func() {
		close(p.closed)
		if p.monitorTimer != nil {
			p.monitorTimer.Stop()
		}
		p.closeDataChannels()
		if err := p.PC.Close(); err != nil {
			p.log.Debug("closing PeerConnection", "err", err)
		}
		if p.retire != nil {
			p.retire()
		}
		if p.hooks.OnHangup != nil {
			p.hooks.OnHangup(reason)
		}
	})
}

func (p *Peer) isClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

// install wires Pion's callbacks to the hooks.
func (p *Peer) install() {
	p.PC.OnConnectionStateChange(p.connectionStateChanged)
	p.PC.OnTrack(p.trackArrived)
	p.PC.OnDataChannel(p.dataChannelArrived)
	if f := p.hooks.OnICEState; f != nil {
		p.PC.OnICEConnectionStateChange(func(s webrtc.ICEConnectionState) { f(s.String()) })
	}
	if f := p.hooks.OnDTLSState; f != nil {
		p.PC.SCTP().Transport().OnStateChange(func(s webrtc.DTLSTransportState) { f(s.String()) })
	}
	if f := p.hooks.OnSelectedPair; f != nil {
		p.PC.SCTP().Transport().ICETransport().OnSelectedCandidatePairChange(func(pair *webrtc.ICECandidatePair) {
			if pair != nil {
				f(candidateAddress(pair.Local) + " <-> " + candidateAddress(pair.Remote))
			}
		})
	}
	if p.fullTrickle {
		p.PC.OnICECandidate(func(c *webrtc.ICECandidate) {
			if p.hooks.OnCandidate == nil || p.isClosed() {
				return
			}
			if c == nil {
				p.hooks.OnCandidate(nil)
				return
			}
			init := c.ToJSON()
			p.hooks.OnCandidate(&init)
		})
	}
}

func (p *Peer) connectionStateChanged(s webrtc.PeerConnectionState) {
	p.log.Debug("PeerConnection state", "state", s.String())
	switch s {
	case webrtc.PeerConnectionStateConnected:
		if p.isClosed() {
			return
		}
		p.upOnce.Do(func() {
			if p.hooks.OnUp != nil {
				p.hooks.OnUp()
			}
		})
	case webrtc.PeerConnectionStateFailed:
		reason := ReasonDTLSAlert
		if p.PC.ICEConnectionState() == webrtc.ICEConnectionStateFailed {
			reason = ReasonICEFailed
		}
		go p.Close(reason)
	case webrtc.PeerConnectionStateClosed:
		// Closed without Close: Pion closes on the peer's DTLS close_notify.
		go p.Close(ReasonDTLSAlert)
	}
}

func (p *Peer) trackArrived(t *webrtc.TrackRemote, r *webrtc.RTPReceiver) {
	p.remap.Store(true)
	go readReceiverRTCP(r, t.RID())
	if f := p.onTrack.Load(); f != nil && *f != nil {
		(*f)(t, r)
		return
	}
	go drain(t)
}

// drain reads a track nobody else reads, so its RTCP and statistics keep flowing.
func drain(t *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := t.Read(buf); err != nil {
			return
		}
	}
}

// readReceiverRTCP reads the RTCP the remote peer sends about one of its streams (its sender
// reports), on the receiver of that stream, until the receiver stops. Pion hands a stream's incoming
// RTCP to the interceptors only as the receiver is read, and Pion's receiver reports take the LSR and
// DLSR fields from the last sender report they saw: unread, every report strata sends says "no
// sender report received", and the sender (a browser) gets no round-trip time from strata's reports.
// Chrome's congestion control then runs on its default RTT (200 ms), which slows its rate increase.
// rid names the simulcast layer of a receiver with several.
func readReceiverRTCP(r *webrtc.RTPReceiver, rid string) {
	buf := make([]byte, 1500)
	for {
		var err error
		if rid != "" {
			_, _, err = r.ReadSimulcast(buf, rid)
		} else {
			_, _, err = r.Read(buf)
		}
		if err != nil && !errors.Is(err, io.ErrShortBuffer) {
			return
		}
	}
}

// startMonitor samples the counters for `media` and `slowlink` events every cfg.Tick, on the
// process's shared loop (package sched) rather than a ticker and goroutine per Peer, until the
// Peer closes.
func (p *Peer) startMonitor(cfg MonitorConfig) {
	start := time.Now()
	generation := ^uint64(0)
	p.monitorTimer = sched.Shared().NewTimer(func() {
		if p.isClosed() {
			return
		}
		if g := p.counters.generation.Load(); g != generation || p.remap.Swap(false) {
			generation = g
			p.mapStreams()
		}
		p.monitor.tick(time.Since(start), peerEvents{p})
	})
	p.monitorTimer.Start(cfg.Tick)
}

// mapStreams tells the monitor which SSRCs belong to which m-line.
func (p *Peer) mapStreams() {
	for _, t := range p.PC.GetTransceivers() {
		mid := t.Mid()
		if mid == "" {
			continue
		}
		var in, out []*streamCounters
		if r := t.Receiver(); r != nil {
			for _, track := range r.Tracks() {
				if c := p.counters.lookup(true, uint32(track.SSRC())); c != nil {
					in = append(in, c)
				}
			}
		}
		if s := t.Sender(); s != nil {
			for _, enc := range s.GetParameters().Encodings {
				if c := p.counters.lookup(false, uint32(enc.SSRC)); c != nil {
					out = append(out, c)
				}
			}
		}
		p.monitor.setStreams(mid, t.Kind().String(), in, out)
	}
}

type peerEvents struct{ p *Peer }

func (e peerEvents) media(mid, kind string, receiving bool) {
	if e.p.hooks.OnMedia != nil && !e.p.isClosed() {
		e.p.hooks.OnMedia(mid, kind, receiving)
	}
}

func (e peerEvents) slowLink(mid, kind string, uplink bool, lost int) {
	if e.p.hooks.OnSlowLink != nil && !e.p.isClosed() {
		e.p.hooks.OnSlowLink(mid, kind, uplink, lost)
	}
}
