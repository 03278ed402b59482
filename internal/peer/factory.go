package peer

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pion/dtls/v3/pkg/protocol/extension"
	"github.com/pion/dtls/v3/pkg/protocol/handshake"
	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/nack"
	"github.com/pion/interceptor/pkg/report"
	"github.com/pion/interceptor/pkg/stats"
	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/udpbatch"
)

// maxNACKsPerPacket bounds how often strata asks for one lost packet. Pion's generator asks every
// 100 ms until the packet arrives or leaves its 512-packet log (17 s of a 30 packet/s stream); on a
// path whose round trip exceeds 100 ms every loss is then asked for several times before the first
// retransmission can arrive, and Chromium resends each packet once per round trip for as long as it
// keeps it (max(1 s, 3 RTT)), paced at up to 2.5 times its estimate. Behind a full 500 ms queue
// that became a retransmission storm: 25-32 % of the packets dropped at the bottleneck and 89-92 %
// of the video bytes retransmissions (bench uplink at 250 kbit/s with audio left out of Chromium's
// estimate, as Janus negotiates it); with 3 requests, 4.5 % and 7-8 %, as with Janus (which asks
// twice). Three requests 100 ms apart still give a short path three chances.
const maxNACKsPerPacket = 3

// ErrFactoryClosed is returned by New after Close.
var ErrFactoryClosed = errors.New("peer: factory closed")

// Factory creates the PeerConnections of one server from its media configuration.
type Factory struct {
	media config.Media
	log   *slog.Logger
	s     *settings
	opts  factoryOptions

	mu     sync.Mutex
	closed bool

	totals peerTotals // every Peer's counters, for Totals
}

// Option configures a Factory.
type Option func(*factoryOptions)

type factoryOptions struct {
	monitor      MonitorConfig
	interceptors []func(*Peer) (interceptor.Factory, error)
	// stampsTWCC: an added interceptor stamps transport-wide sequence numbers itself.
	stampsTWCC bool
	limits     Limits
	services   []ChannelService
	// rttObserver gets every RTT measured from a peer's reception reports (WithRTTObserver).
	rttObserver func(time.Duration)
}

// WithMonitor replaces the timing of `media` and `slowlink` events (DefaultMonitorConfig).
func WithMonitor(cfg MonitorConfig) Option {
	return func(o *factoryOptions) { o.monitor = cfg }
}

// WithInterceptor adds an interceptor to every PeerConnection (see Factory.registry for where). The function
// is called once per Peer (before its PeerConnection exists), so the interceptor can report into that
// Peer, e.g. with SetBWEInfo. This is the seam for the congestion controllers.
func WithInterceptor(f func(*Peer) (interceptor.Factory, error)) Option {
	return func(o *factoryOptions) { o.interceptors = append(o.interceptors, f) }
}

// WithTWCCStamper says that an interceptor added with WithInterceptor stamps transport-wide
// sequence numbers on outgoing packets itself (as strata's congestion-control interceptor does,
// without allocating), so Pion's stamping interceptor is left out.
func WithTWCCStamper() Option {
	return func(o *factoryOptions) { o.stampsTWCC = true }
}

// NewFactory validates the media configuration, builds the Pion settings and opens the shared
// sockets (UDP mux, ICE-TCP) if configured.
func NewFactory(m config.Media, log *slog.Logger, opts ...Option) (*Factory, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := factoryOptions{monitor: DefaultMonitorConfig(), limits: DefaultLimits()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.monitor.Tick <= 0 || o.monitor.Window <= 0 {
		return nil, errors.New("peer: monitor tick and window must be positive")
	}
	if o.limits.RemoteCandidates <= 0 {
		return nil, errors.New("peer: the remote candidate limit must be positive")
	}
	s, err := buildSettings(m, log)
	if err != nil {
		return nil, err
	}
	return &Factory{media: m, log: log, s: s, opts: o}, nil
}

// Batcher groups the writes of one fan-out on the shared UDP sockets into one system call per
// socket (media.ice.batch_writes with udp_mux_port); udpbatch.None when sockets are per peer.
func (f *Factory) Batcher() udpbatch.Batcher { return f.s.batcher }

// Marks is where the SFU marks the RTP packets it sends on the shared UDP sockets with a DSCP (see
// udpbatch.Marks); nil when they are not udpbatch sockets (no udp_mux_port, or batch_writes off).
func (f *Factory) Marks() *udpbatch.Marks { return f.s.marks }

// Close releases the shared sockets. Peers already created keep running until closed.
func (f *Factory) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	if err := f.s.close(); err != nil {
		f.log.Debug("closing ICE sockets", "err", err)
	}
}

// PeerOption adjusts one PeerConnection (where Option adjusts every one of a Factory).
type PeerOption func(*peerOptions)

type peerOptions struct {
	noNACKResponder bool
	sendOnly        bool
	bridgeCodecs    bool
}

// WithoutNACKResponder leaves Pion's NACK responder out of this PeerConnection: its owner answers
// retransmission requests itself (the videoroom does, from the publisher's shared packet cache), so
// no per-peer copy of every sent packet is kept.
func WithoutNACKResponder() PeerOption {
	return func(o *peerOptions) { o.noNACKResponder = true }
}

// WithSendOnly is for a PeerConnection that receives no media (a videoroom subscriber's): it leaves
// out what only serves incoming streams — the NACK generator (and its 100 ms ticker), Pion's
// receiver reports and Pion's statistics — which also parse every incoming RTCP packet into Pion's
// structures. What the peer reports about strata's streams is still counted (handle_info).
func WithSendOnly() PeerOption {
	return func(o *peerOptions) { o.sendOnly = true }
}

// New creates a Peer with a fresh PeerConnection.
func (f *Factory) New(h Hooks, opts ...PeerOption) (*Peer, error) {
	var po peerOptions
	for _, o := range opts {
		o(&po)
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return nil, ErrFactoryClosed
	}
	p := &Peer{
		hooks:       h,
		log:         f.log,
		fullTrickle: f.media.ICE.FullTrickle,
		lite:        f.media.ICE.Lite,
		counters:    newCounterSet(),
		batcher:     f.s.batcher,
		marks:       f.s.marks,
		monitor:     newMonitor(f.opts.monitor),
		cands:       newRemoteCandidates(f.opts.limits.RemoteCandidates),
		closed:      make(chan struct{}),
		services:    f.opts.services,
	}
	engine := f.s.engine // a copy: the DTLS hook and the buffers below belong to this Peer only
	engine.SetDTLSServerHelloMessageHook(p.observeServerHello)
	engine.LoggerFactory = claimLogs{LoggerFactory: engine.LoggerFactory, claims: &p.claims}
	var arr *arrivals
	if f.media.TWCC {
		arr = newArrivals() // packets are stamped as they leave SRTP, for the feedback
		engine.BufferFactory = arr.bufferFactory
	}
	p.engine = engine
	registry, err := f.registry(p, po, arr)
	if err != nil {
		return nil, err
	}
	mediaEngine := f.s.media
	if po.bridgeCodecs {
		mediaEngine = f.s.bridgeMedia
	}
	api := webrtc.NewAPI(
		webrtc.WithSettingEngine(engine),
		webrtc.WithMediaEngine(mediaEngine),
		webrtc.WithInterceptorRegistry(registry),
	)
	pc, err := api.NewPeerConnection(f.s.rtcConfig)
	if err != nil {
		return nil, fmt.Errorf("new PeerConnection: %w", err)
	}
	p.PC = pc
	f.totals.add(p)
	p.retire = func() { f.totals.retire(p) }
	p.install()
	p.startMonitor(f.opts.monitor)
	return p, nil
}

// registry builds the interceptor chain of one PeerConnection. Order matters: an interceptor sees
// the RTP and RTCP that interceptors added after it send, but not what those added before it send. So
// strata's counters and Pion's statistics come first (they see NACKs, reports and retransmissions
// too), then the interceptors added with WithInterceptor (they see outgoing packets with their
// transport-wide sequence numbers), then NACK generator and responder, RTCP sender and receiver
// reports, and TWCC (sequence numbers on what strata sends, feedback on what it receives, with the
// arrival times arr took; see twccfeedback.go).
func (f *Factory) registry(p *Peer, po peerOptions, arr *arrivals) (*interceptor.Registry, error) {
	reg := &interceptor.Registry{}
	reg.Add(captureFactory{p: p}) // first: it sees what every other interceptor sends (capture.go)
	lf := f.s.engine.LoggerFactory
	reg.Add(countingFactory{set: p.counters, rtt: f.opts.rttObserver})
	if !po.sendOnly {
		st, err := stats.NewInterceptor(stats.WithLoggerFactory(lf))
		if err != nil {
			return nil, err
		}
		// Called synchronously while the PeerConnection is built, before New returns.
		st.OnNewPeerConnection(func(_ string, g stats.Getter) { p.stats = g })
		reg.Add(st)
	}
	for _, add := range f.opts.interceptors {
		extra, err := add(p)
		if err != nil {
			return nil, err
		}
		reg.Add(extra)
	}
	if f.media.NACK {
		if !po.sendOnly {
			gen, err := nack.NewGeneratorInterceptor(nack.WithGeneratorLoggerFactory(lf), nack.GeneratorMaxNacksPerPacket(maxNACKsPerPacket))
			if err != nil {
				return nil, err
			}
			reg.Add(gen)
		}
		if !po.noNACKResponder {
			resp, err := nack.NewResponderInterceptor(nack.WithResponderLoggerFactory(lf))
			if err != nil {
				return nil, err
			}
			reg.Add(resp)
		}
	}
	if !po.sendOnly {
		recv, err := report.NewReceiverInterceptor(report.WithReceiverLoggerFactory(lf))
		if err != nil {
			return nil, err
		}
		reg.Add(recv)
	}
	send, err := report.NewSenderInterceptor(report.WithSenderLoggerFactory(lf))
	if err != nil {
		return nil, err
	}
	reg.Add(send)
	if f.media.TWCC {
		if !f.opts.stampsTWCC {
			hdr, err := twcc.NewHeaderExtensionInterceptor()
			if err != nil {
				return nil, err
			}
			reg.Add(hdr)
		}
		reg.Add(newFeedbackFactory(arr, f.media.TWCCInterval, lf))
	}
	return reg, nil
}

// observeServerHello records the SRTP profile strata picks as DTLS server, which Pion does not expose.
func (p *Peer) observeServerHello(m handshake.MessageServerHello) handshake.Message {
	for _, ext := range m.Extensions {
		if u, ok := ext.(*extension.UseSRTP); ok && len(u.ProtectionProfiles) > 0 {
			name := srtpProfileName(u.ProtectionProfiles[0])
			p.srtp.Store(&name)
		}
	}
	return &m
}

// srtpProfileName uses the names Janus reports (OpenSSL's).
func srtpProfileName(pr extension.SRTPProtectionProfile) string {
	switch pr {
	case extension.SRTP_AEAD_AES_128_GCM:
		return "SRTP_AEAD_AES_128_GCM"
	case extension.SRTP_AEAD_AES_256_GCM:
		return "SRTP_AEAD_AES_256_GCM"
	case extension.SRTP_AES128_CM_HMAC_SHA1_80:
		return "SRTP_AES128_CM_SHA1_80"
	case extension.SRTP_AES128_CM_HMAC_SHA1_32:
		return "SRTP_AES128_CM_SHA1_32"
	default:
		return fmt.Sprintf("0x%04x", uint16(pr))
	}
}
