// Package client holds the load generator's synthetic WebRTC clients: publishers and subscribers
// of a Janus videoroom (janus.plugin.videoroom, the 1.x multistream API), speaking the Janus API
// over HTTP or WebSocket through janusclient and carrying media over real Pion PeerConnections.
// Publishers send the mediasrc clips at real-time pace (simulcast rids f/h/q, highest first, as
// Janus assumes by default); subscribers receive every stream of the feeds they chose and count
// packets with rtpstats, without decoding: as light receivers (Env.Light, tap.go) from the clear
// RTP headers at the socket, with Pion decrypting only a sample, or through Pion's whole receive
// stack.
package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/nack"
	"github.com/pion/interceptor/pkg/report"
	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/logging"
	"github.com/pion/sdp/v3"
	"github.com/pion/transport/v4"
	"github.com/pion/transport/v4/stdnet"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

// Plugin is the videoroom's package name; AudioBridgePlugin the audio bridge's.
const (
	Plugin            = "janus.plugin.videoroom"
	AudioBridgePlugin = "janus.plugin.audiobridge"
)

// Env is what every client of a run shares: the server, one Pion API (codecs, interceptors,
// ICE settings), the media clips and the run's clock.
type Env struct {
	Server string
	Room   uint64
	// Plugin is the plugin the run drives and the control handle attaches (default the videoroom).
	Plugin string
	Media  *mediasrc.Media
	// Voice, when set, gives publisher i its audio (instead of looping the Opus clip).
	Voice func(index int) mediasrc.AudioSource
	// Substream is the simulcast layer subscribers ask for, -1 for the server's default.
	Substream   int
	JoinTimeout time.Duration
	// Now is the time since the run started (monotonic); every measurement uses it.
	Now func() time.Duration
	// Light makes subscriptions light receivers (tap.go): media counted at the socket from the
	// clear RTP headers, a sample decrypted by Pion; false gives them Pion's whole receive stack.
	Light bool

	api  *webrtc.API
	http *http.Client
	// What a light receiver's own API is built from: the settings (with its tap as the network),
	// the codecs and extensions, and no interceptors.
	se       webrtc.SettingEngine
	me       *webrtc.MediaEngine
	net      transport.Net
	feedback feedbackLoop
}

// Config builds an Env.
type Config struct {
	Server        string
	Room          uint64
	Plugin        string
	Media         *mediasrc.Media
	Substream     int
	JoinTimeout   time.Duration
	ICEInterfaces []string
	// ICEAddress, when set, keeps the local addresses ICE may gather on (those it returns true
	// for), on the interfaces ICEInterfaces allows.
	ICEAddress func(net.IP) bool
	Now        func() time.Duration
	// Net, when set, is the network Pion gathers on and opens its sockets through (for clients
	// that live in another network namespace than the process); HTTP, when set, is the client the
	// Janus API requests go through.
	Net  transport.Net
	HTTP *http.Client
	// Light: see Env.
	Light bool
}

// NewEnv builds the shared Pion API. ICE uses the interfaces given, or "lo" (loopback included)
// when the server is on a loopback address, or else every interface but loopback, as browsers do.
func NewEnv(c Config) (*Env, error) {
	var err error
	var se webrtc.SettingEngine
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	if c.Net != nil {
		se.SetNet(c.Net)
	}
	ifaces := c.ICEInterfaces
	if len(ifaces) == 0 && loopbackServer(c.Server) {
		ifaces = []string{"lo"}
	}
	if len(ifaces) > 0 {
		se.SetInterfaceFilter(func(name string) bool { return slices.Contains(ifaces, name) })
		if slices.Contains(ifaces, "lo") {
			se.SetIncludeLoopbackCandidate(true)
		}
	}
	if c.ICEAddress != nil {
		se.SetIPFilter(c.ICEAddress)
	}
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		return nil, err
	}
	reg := &interceptor.Registry{}
	// A browser's feedback (NACK, receiver reports, transport-wide CC) so that servers see what they
	// would see from Chrome; Pion's stats interceptor is left out, the clients keep their own.
	// Pion's own logs are off: at teardown thousands of streams would each report the closed pipe.
	quiet := logging.NewDefaultLoggerFactory()
	quiet.DefaultLogLevel = logging.LogLevelDisabled
	se.LoggerFactory = quiet
	if err := webrtc.ConfigureNackWithOptions(me, reg, []nack.GeneratorOption{nack.WithGeneratorLoggerFactory(quiet)},
		nack.WithResponderLoggerFactory(quiet)); err != nil {
		return nil, err
	}
	if err := webrtc.ConfigureRTCPReportsWithOptions(reg, []report.ReceiverOption{report.WithReceiverLoggerFactory(quiet)},
		report.WithSenderLoggerFactory(quiet)); err != nil {
		return nil, err
	}
	if err := webrtc.ConfigureSimulcastExtensionHeaders(me); err != nil {
		return nil, err
	}
	// The audio level of every audio packet (RFC 6464), as browsers offer it: servers detect who
	// talks from it.
	if err := me.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: sdp.AudioLevelURI}, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	if err := webrtc.ConfigureTWCCSenderWithOptions(me, reg, twcc.WithLoggerFactory(quiet)); err != nil {
		return nil, err
	}
	// Publishers number their packets for transport-wide feedback, as browsers do, so the server
	// does the per-packet work of producing that feedback.
	if err := webrtc.ConfigureTWCCHeaderExtensionSender(me, reg); err != nil {
		return nil, err
	}
	base := c.Net
	if base == nil {
		if base, err = stdnet.NewNet(); err != nil {
			return nil, err
		}
	}
	env := &Env{Server: c.Server, Room: c.Room, Plugin: c.Plugin, Media: c.Media, Substream: c.Substream, JoinTimeout: c.JoinTimeout, Now: c.Now,
		Light: c.Light, se: se, me: me, net: base,
		api: webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg)),
		http: &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{
			MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second,
		}}}
	if c.HTTP != nil {
		env.http = c.HTTP
	}
	if env.JoinTimeout <= 0 {
		env.JoinTimeout = 20 * time.Second
	}
	if env.Now == nil {
		start := time.Now()
		env.Now = func() time.Duration { return time.Since(start) }
	}
	return env, nil
}

func (e *Env) plugin() string {
	if e.Plugin == "" {
		return Plugin
	}
	return e.Plugin
}

func loopbackServer(server string) bool {
	u, err := url.Parse(server)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Dial opens one client connection to the server (each participant has its own, as browsers do;
// over HTTP they share a connection pool).
func (e *Env) Dial(ctx context.Context) (*janusclient.Client, error) {
	return janusclient.Dial(ctx, e.Server, janusclient.WithHTTPClient(e.http))
}

// newPC creates a PeerConnection and a channel that is closed once it connects (or fails).
func (e *Env) newPC() (*webrtc.PeerConnection, <-chan webrtc.PeerConnectionState, error) {
	pc, err := e.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, nil, err
	}
	states := make(chan webrtc.PeerConnectionState, 16)
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		select {
		case states <- s:
		default:
		}
	})
	return pc, states, nil
}

// newLightPC creates a light receiver's PeerConnection: its own API whose network is the tap's
// and which has no interceptors (the tap's feedback replaces them).
func (e *Env) newLightPC() (*webrtc.PeerConnection, <-chan webrtc.PeerConnectionState, *tap, error) {
	t := newTap(e.Now, rand.Uint32())
	se := e.se
	se.SetNet(tapNet{Net: e.net, tap: t})
	api := webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(e.me), webrtc.WithInterceptorRegistry(&interceptor.Registry{}))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, nil, nil, err
	}
	states := make(chan webrtc.PeerConnectionState, 16)
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		select {
		case states <- s:
		default:
		}
	})
	return pc, states, t, nil
}

// waitConnected waits until the PeerConnection is connected.
func waitConnected(ctx context.Context, states <-chan webrtc.PeerConnectionState) error {
	for {
		select {
		case s := <-states:
			switch s {
			case webrtc.PeerConnectionStateConnected:
				return nil
			case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
				return fmt.Errorf("PeerConnection %s", s)
			}
		case <-ctx.Done():
			return fmt.Errorf("PeerConnection not connected: %w", ctx.Err())
		}
	}
}

// localDescription sets d as the local description, waits for every candidate (half trickle, as
// Janus's own clients do by default) and returns the JSEP to send.
func localDescription(ctx context.Context, pc *webrtc.PeerConnection, d webrtc.SessionDescription) (*janusclient.JSEP, error) {
	done := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(d); err != nil {
		return nil, err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("ICE gathering: %w", ctx.Err())
	}
	trickle := false
	ld := pc.LocalDescription()
	return &janusclient.JSEP{Type: ld.Type.String(), SDP: ld.SDP, Trickle: &trickle}, nil
}

// waitEvent waits for a Janus event of the given kind on a handle (other events are dropped).
func waitEvent(ctx context.Context, h *janusclient.Handle, kind string) error {
	for {
		select {
		case ev, ok := <-h.Events():
			if !ok {
				return fmt.Errorf("handle closed while waiting for %s", kind)
			}
			if ev.Janus == kind {
				return nil
			}
			if ev.Janus == "hangup" {
				return fmt.Errorf("hangup while waiting for %s: %s", kind, ev.Reason)
			}
		case <-ctx.Done():
			return fmt.Errorf("no %s: %w", kind, ctx.Err())
		}
	}
}
