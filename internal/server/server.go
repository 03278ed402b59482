// Package server assembles a running strata: it builds the PeerConnection factory and the plugins from
// the configuration, starts the gateway, and binds the HTTP, WebSocket and admin listeners, plain and
// secure. It holds no logic of its own beyond wiring (and filling in the secrets the configuration
// leaves to it), so tests can start a complete server in-process on free ports.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/strata-rtc/strata/internal/bwe"
	"github.com/strata-rtc/strata/internal/certs"
	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/dashboard"
	"github.com/strata-rtc/strata/internal/events"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/logagg"
	"github.com/strata-rtc/strata/internal/lowprio/service"
	"github.com/strata-rtc/strata/internal/metrics"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/plugins/audiobridge"
	"github.com/strata-rtc/strata/internal/plugins/echotest"
	"github.com/strata-rtc/strata/internal/plugins/nosip"
	"github.com/strata-rtc/strata/internal/plugins/recordplay"
	sipplugin "github.com/strata-rtc/strata/internal/plugins/sip"
	"github.com/strata-rtc/strata/internal/plugins/streaming"
	"github.com/strata-rtc/strata/internal/plugins/textroom"
	"github.com/strata-rtc/strata/internal/plugins/videocall"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
	"github.com/strata-rtc/strata/internal/plugins/voicemail"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/transport/adminapi"
	"github.com/strata-rtc/strata/internal/transport/httpapi"
	"github.com/strata-rtc/strata/internal/transport/whip"
	"github.com/strata-rtc/strata/internal/transport/wsapi"
	"github.com/strata-rtc/strata/web"
)

// Server is a complete strata instance.
type Server struct {
	cfg     *config.Config
	log     *slog.Logger
	logs    *logagg.Handler // log's handler, holding back repeated warnings
	level   *slog.LevelVar
	peers   *peer.Factory
	lowprio *service.Service // nil when lowprio.enabled is off
	metrics *metrics.Metrics // nil when transports.admin.metrics is off
	gw      *gateway.Gateway
	plugins []plugin.Plugin
	ws      *wsapi.Handler
	adminWS *adminapi.WSHandler
	http    *httpapi.Handler
	events  *events.Bus   // the event handlers; nil without any
	whip    *whip.Handler // nil unless transports.http.whip.enabled
	// node is this server in the cluster, engine its Redis; both nil unless cluster.enabled.
	node   *cluster.Node
	engine *redisengine.Engine
	// view is node as the plugins and transports see it: a nil interface without a cluster.
	view cluster.View
	// relay carries media between this node and the others (nil unless cluster.enabled).
	relay *relay.Relay

	listeners  map[string]*listener
	selfSigned *certs.Source   // the one generated certificate, shared by every self_signed listener
	certFiles  []*certs.Source // the certificates read from files, read again by ReloadCertificates
}

// Listener names, as used by Addr.
const (
	HTTP       = "http"
	HTTPS      = "https"
	WebSocket  = "websocket"
	WSS        = "wss"
	Admin      = "admin"
	AdminHTTPS = "admin_https"
	AdminWS    = "admin_websocket"
	AdminWSS   = "admin_wss"
)

// New builds a server from cfg. Nothing listens until Start.
func New(cfg *config.Config, log *slog.Logger, level *slog.LevelVar) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	// A configuration built in code is held to the same rules as a file (sample secrets included).
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = withGeneratedSecrets(cfg, log)
	applyRuntime(cfg.Runtime)
	if level == nil {
		level = new(slog.LevelVar)
	}
	// Warnings and errors that remote input can repeat at will (bad candidates, unknown SSRCs, a
	// plugin failing on the same request) are written once per window with a count.
	logs := logagg.NewHandler(log.Handler(), slog.LevelWarn, logagg.DefaultWindow, nil)
	log = slog.New(logs)
	m := newMetrics(cfg)
	ccOpts, err := bwe.PeerOptions(cfg.Media, m.estimateObserver())
	if err != nil {
		return nil, fmt.Errorf("congestion control: %w", err)
	}
	peerOpts := append(ccOpts, peer.WithLimits(peer.Limits{RemoteCandidates: cfg.General.Limits.RemoteCandidates}))
	peerOpts = append(peerOpts, m.peerOptions()...)
	var lp *service.Service
	if cfg.LowPrio.Enabled {
		if lp, err = service.New(cfg.LowPrio, log.With("component", "lowprio")); err != nil {
			return nil, err
		}
		peerOpts = append(peerOpts, lp.Option())
	}
	peers, err := peer.NewFactory(cfg.Media, log.With("component", "peer"), peerOpts...)
	if err != nil {
		if lp != nil {
			lp.Close()
		}
		return nil, fmt.Errorf("media configuration: %w", err)
	}
	bus, err := eventBus(cfg.Events, cfg.General.ServerName, log.With("component", "events"))
	if err != nil {
		peers.Close()
		if lp != nil {
			lp.Close()
		}
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, logs: logs, level: level, peers: peers, lowprio: lp, events: bus, listeners: map[string]*listener{}}
	load := &clusterLoad{peers: peers}
	if s.node, s.engine, s.relay, err = joinCluster(cfg, log, load); err != nil {
		peers.Close()
		bus.Close(eventsCloseTimeout)
		if lp != nil {
			lp.Close()
		}
		return nil, err
	}
	gwOpts := []gateway.Option{gateway.WithEvents(bus), gateway.WithNode(s.clusterSlot, s.clusterAccepting)}
	sources := metrics.Sources{Peers: peers}
	if s.node != nil {
		s.view = s.node
		admin := clusterAdmin{s.node, s.relay}
		gwOpts = append(gwOpts, gateway.WithClusterAdmin(admin))
		sources.Cluster, sources.Relay = admin, s.relay
	}
	s.plugins = loadPlugins(cfg, log, peers, s.pluginCluster())
	s.gw = gateway.New(cfg, peers, s.plugins, log.With("component", "gateway"), level, gwOpts...)
	load.gw.Store(s.gw)
	sources.Gateway, sources.Plugins = s.gw, s.plugins
	s.metrics = m.register(sources)
	return s, nil
}

// loadPlugins creates every plugin enabled in the configuration. cl is the cluster (empty without
// one), for the plugins whose rooms span nodes.
func loadPlugins(cfg *config.Config, log *slog.Logger, peers *peer.Factory, cl pluginCluster) []plugin.Plugin {
	var ps []plugin.Plugin
	rec := record.SessionOptions{Playable: cfg.Recording.Playable, Formats: cfg.Recording.Containers}
	if cfg.Plugins.EchoTest.Enabled {
		ps = append(ps, echotest.New(cfg.Plugins.EchoTest, rec, log.With("plugin", "echotest")))
	}
	if cfg.Plugins.VideoRoom.Enabled {
		ps = append(ps, videoroom.New(cfg.Plugins.VideoRoom, rec, log.With("plugin", "videoroom"), cl.videoroom()...))
	}
	if cfg.Plugins.AudioBridge.Enabled {
		ps = append(ps, audiobridge.New(cfg.Plugins.AudioBridge, rec, log.With("plugin", "audiobridge"), cl.audiobridge()...))
	}
	if cfg.Plugins.Streaming.Enabled {
		ps = append(ps, streaming.New(cfg.Plugins.Streaming, cfg.Plugins.VideoRoom.Allocation, rec, peers.Batcher(), log.With("plugin", "streaming"),
			cl.streaming()...))
	}
	if cfg.Plugins.VideoCall.Enabled {
		ps = append(ps, videocall.New(cfg.Plugins.VideoCall, cfg.Plugins.VideoRoom.Allocation, rec, log.With("plugin", "videocall")))
	}
	if cfg.Plugins.VoiceMail.Enabled {
		ps = append(ps, voicemail.New(cfg.Plugins.VoiceMail, log.With("plugin", "voicemail")))
	}
	if cfg.Plugins.TextRoom.Enabled {
		ps = append(ps, textroom.New(cfg.Plugins.TextRoom, log.With("plugin", "textroom")))
	}
	if cfg.Plugins.RecordPlay.Enabled {
		if rp, err := recordplay.New(cfg.Plugins.RecordPlay, rec, log.With("plugin", "recordplay")); err != nil {
			log.Error("janus.plugin.recordplay not loaded", "err", err)
		} else {
			ps = append(ps, rp)
		}
	}
	if cfg.Plugins.SIP.Enabled {
		ps = append(ps, sipplugin.New(cfg.Plugins.SIP, log.With("plugin", "sip")))
	}
	if cfg.Plugins.NoSIP.Enabled {
		ps = append(ps, nosip.New(cfg.Plugins.NoSIP, rec, log.With("plugin", "nosip")))
	}
	return ps
}

// fileServer is a plugin that serves files on the HTTP listener (the voicemail's messages, whose
// URLs its events give), whether or not the demos are served.
type fileServer interface {
	Pattern() string
	Handler() http.Handler
}

// Start binds every enabled listener and serves in the background.
func (s *Server) Start() error {
	err := s.start()
	if err != nil {
		s.Close()
	}
	return err
}

func (s *Server) start() error {
	t := s.cfg.Transports
	if t.HTTP.Enabled || t.HTTP.HTTPS.Enabled {
		mux := http.NewServeMux()
		s.http = httpapi.New(s.gw, s.cfg, httpapi.WithProxy(s.clusterProxy()))
		base := t.HTTP.BasePath
		mux.Handle(base, s.http)
		mux.Handle(base+"/", s.http)
		if t.HTTP.WHIP.Enabled {
			s.whip = whip.New(s.gw, *s.cfg, s.log.With("component", "whip"))
			mux.Handle("/whip/", s.whip)
			mux.Handle("/whep/", s.whip)
		}
		for _, p := range s.plugins {
			if f, ok := p.(fileServer); ok {
				mux.Handle(f.Pattern(), f.Handler())
			}
		}
		if t.HTTP.Demos {
			mux.Handle("/", web.HandlerWithConfig(s.clientConfig))
		}
		if err := s.listenPair(HTTP, t.HTTP.Enabled, t.HTTP.Listen, HTTPS, t.HTTP.HTTPS, mux); err != nil {
			return err
		}
	}
	if t.WebSocket.Enabled || t.WebSocket.WSS.Enabled {
		s.ws = wsapi.New(s.gw, s.cfg, wsapi.WithProxy(s.clusterProxy()))
		if err := s.listenPair(WebSocket, t.WebSocket.Enabled, t.WebSocket.Listen, WSS, t.WebSocket.WSS, s.ws); err != nil {
			return err
		}
	}
	if t.Admin.Running() {
		mux := http.NewServeMux()
		admin := adminapi.New(s.gw, s.cfg)
		mux.Handle(t.Admin.BasePath, admin)
		mux.Handle(t.Admin.BasePath+"/", admin)
		if s.metrics != nil {
			// Beside the admin API, not behind it: Prometheus sends no admin_secret.
			mux.Handle(config.MetricsPath, s.metrics.Handler())
		}
		if t.Admin.Dashboard {
			d := dashboard.New(s.gw, s.plugins, t.Admin.AdminSecret)
			mux.Handle(config.DashboardPath, d)
			mux.Handle(config.DashboardPath+"/", d)
		}
		if err := s.listenPair(Admin, t.Admin.Enabled, t.Admin.Listen, AdminHTTPS, t.Admin.HTTPS, mux); err != nil {
			return err
		}
	}
	if aw := t.Admin.WebSocket; aw.Enabled || aw.WSS.Enabled {
		s.adminWS = adminapi.NewWS(s.gw, s.cfg)
		if err := s.listenPair(AdminWS, aw.Enabled, aw.Listen, AdminWSS, aw.WSS, s.adminWS); err != nil {
			return err
		}
	}
	return s.startCluster()
}

// clientConfig tells the demo pages where the Janus API is, with the ports actually bound: the
// WebSocket's, and the secure ports a page opened without a secure context should point to.
func (s *Server) clientConfig() web.ClientConfig {
	return web.ClientConfig{
		JanusPath:     s.cfg.Transports.HTTP.BasePath,
		WebSocketPort: s.port(WebSocket),
		WSSPort:       s.port(WSS),
		HTTPSPort:     s.port(HTTPS),
	}
}

// port is the bound port of a listener, 0 if it is not running.
func (s *Server) port(name string) int {
	_, port, err := net.SplitHostPort(s.Addr(name))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(port)
	return n
}

// Addr is the bound address of a listener (HTTP, HTTPS, WebSocket, WSS, Admin, AdminHTTPS, AdminWS or
// AdminWSS), or ""
// if it is not running.
func (s *Server) Addr(name string) string {
	if l, ok := s.listeners[name]; ok {
		return l.ln.Addr().String()
	}
	return ""
}

// HTTPAddr, WSAddr and AdminAddr are shorthands for Addr.
func (s *Server) HTTPAddr() string  { return s.Addr(HTTP) }
func (s *Server) WSAddr() string    { return s.Addr(WebSocket) }
func (s *Server) AdminAddr() string { return s.Addr(Admin) }

// Gateway exposes the gateway (for tests and the admin tooling).
func (s *Server) Gateway() *gateway.Gateway { return s.gw }

// Close destroys every session and plugin, stops the listeners and releases the media stack.
func (s *Server) Close() {
	// The cluster first: the other nodes stop sending this one requests and take its rooms over
	// while its sessions end.
	s.leaveCluster()
	// The gateway goes first: destroying the sessions releases held long-polls and WebSockets, so the
	// listeners can then shut down without waiting for them.
	s.gw.Close()
	if s.ws != nil {
		s.ws.Close() // hijacked connections are not the http.Server's to close
	}
	if s.whip != nil {
		s.whip.Close()
	}
	if s.http != nil {
		s.http.Close() // held long-polls answer keepalive now rather than at their timeout
	}
	if s.adminWS != nil {
		s.adminWS.Close() // hijacked too
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for name, l := range s.listeners {
		_ = l.srv.Shutdown(ctx)
		delete(s.listeners, name)
	}
	if s.lowprio != nil {
		s.lowprio.Close() // the PeerConnections are closed: their transfers are ending
	}
	s.peers.Close()                    // the gateway has already destroyed the plugins
	s.events.Close(eventsCloseTimeout) // the last events (shutdown, destroyed sessions) delivered if the backends take them
	s.logs.Drain()                     // the counts of warnings still held back
}
