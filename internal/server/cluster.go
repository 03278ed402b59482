package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugins/audiobridge"
	"github.com/strata-rtc/strata/internal/plugins/streaming"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// Cluster is the cluster listener's name, as used by Addr.
const Cluster = "cluster"

// clusterStopTimeout bounds leaving the cluster at shutdown (releasing leases, deleting the
// record): Redis answers in milliseconds or is gone.
const clusterStopTimeout = 2 * time.Second

// clusterLoad is what the node reports of its work. The gateway exists only after the plugins,
// which take the cluster's View, so it is filled in once built.
type clusterLoad struct {
	gw    atomic.Pointer[gateway.Gateway]
	relay atomic.Pointer[relay.Relay]
	peers *peer.Factory
}

func (l *clusterLoad) load() cluster.Load {
	var ld cluster.Load
	if gw := l.gw.Load(); gw != nil {
		ld.Sessions = gw.SessionCount()
	}
	if r := l.relay.Load(); r != nil {
		ld.Relays = len(r.Stats().Links)
	}
	ld.PeerConnections = int(l.peers.Totals().Live)
	return ld
}

// joinCluster builds the Redis engine and joins the cluster when cluster.enabled; nil, nil
// otherwise. The advertised URLs come from the configuration's listen addresses until Start
// knows the bound ports.
func joinCluster(cfg *config.Config, log *slog.Logger, load *clusterLoad) (*cluster.Node, *redisengine.Engine, *relay.Relay, error) {
	c := cfg.Cluster
	if !c.Enabled {
		return nil, nil, nil, nil
	}
	eng, err := redisengine.New(redisengine.Options{Address: c.Redis.Address, Password: c.Redis.Password,
		DB: c.Redis.DB, Prefix: c.Name})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cluster: %w", err)
	}
	t := cfg.Transports
	api, ws, internal := advertised(cfg, t.HTTP.Listen, t.WebSocket.Listen, c.Listen)
	node, err := cluster.New(cluster.Config{
		NodeID: c.NodeName(), API: api, WS: ws, Internal: internal, Secret: c.Secret,
		Heartbeat: c.Heartbeat, NodeTTL: c.NodeTTL, LeaseTTL: c.LeaseTTL, MaxSessions: c.MaxSessions,
	}, eng, cluster.WithLoad(load.load), cluster.WithLogger(log))
	if err != nil {
		_ = eng.Close()
		return nil, nil, nil, err
	}
	r, err := newRelay(c.Relay, node, log)
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), clusterStopTimeout)
		defer cancel()
		_ = node.Stop(ctx)
		_ = eng.Close()
		return nil, nil, nil, err
	}
	load.relay.Store(r)
	return node, eng, r, nil
}

// newRelay builds the node's media relay (the node carries its signalling) and ends the links
// of nodes that leave the cluster.
func newRelay(c config.ClusterRelay, node *cluster.Node, log *slog.Logger) (*relay.Relay, error) {
	rc, err := relay.ConfigFrom(c, node.Self().ID, log)
	if err != nil {
		return nil, err
	}
	r, err := relay.New(rc, node)
	if err != nil {
		return nil, fmt.Errorf("cluster relay: %w", err)
	}
	node.Watch(func(ev cluster.NodeEvent) {
		if ev.Kind == cluster.NodeGone {
			r.PeerGone(ev.Node.ID)
		}
	})
	return r, nil
}

// pluginCluster is what the plugins whose rooms span nodes get of the cluster: nothing without one.
type pluginCluster struct {
	view  cluster.View
	relay *relay.Relay
}

func (s *Server) pluginCluster() pluginCluster { return pluginCluster{s.view, s.relay} }

func (c pluginCluster) videoroom() []videoroom.Option {
	if c.view == nil {
		return nil
	}
	return []videoroom.Option{videoroom.WithCluster(c.view, c.relay)}
}

func (c pluginCluster) audiobridge() []audiobridge.Option {
	if c.view == nil {
		return nil
	}
	return []audiobridge.Option{audiobridge.WithCluster(c.view, c.relay)}
}

func (c pluginCluster) streaming() []streaming.Option {
	if c.view == nil {
		return nil
	}
	return []streaming.Option{streaming.WithCluster(c.view, c.relay)}
}

// clusterAdmin is the node with its relay, as the admin API and the metrics show them.
type clusterAdmin struct {
	*cluster.Node
	relay *relay.Relay
}

// Relays is the relay's links and counters.
func (a clusterAdmin) Relays() any { return a.relay.Stats() }

// advertised returns the URLs the other nodes use for this one: cluster.advertise's, or derived
// from the listeners' addresses (bound ones once listening) with the host name for a listener
// on every interface. A URL whose listener is off is empty.
func advertised(cfg *config.Config, httpAddr, wsAddr, clusterAddr string) (api, ws, internal string) {
	t, adv := cfg.Transports, cfg.Cluster.Advertise
	api, ws, internal = adv.API, adv.WS, adv.Internal
	if api == "" && t.HTTP.Enabled {
		api = "http://" + hostPort(httpAddr) + t.HTTP.BasePath
	}
	if ws == "" && t.WebSocket.Enabled {
		ws = "ws://" + hostPort(wsAddr)
	}
	if internal == "" {
		internal = "http://" + hostPort(clusterAddr)
	}
	return api, ws, internal
}

// hostPort makes a listen address one another machine can dial: an unspecified host (":7090",
// "0.0.0.0:7090", "[::]:7090") becomes this host's name.
func hostPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if host, err = os.Hostname(); err != nil || host == "" {
			host = "localhost"
		}
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// startCluster binds the cluster listener and advertises the bound addresses.
func (s *Server) startCluster() error {
	if s.node == nil {
		return nil
	}
	if err := s.listen(Cluster, s.cfg.Cluster.Listen, s.node.Handler(), nil); err != nil {
		return err
	}
	httpAddr, wsAddr := s.Addr(HTTP), s.Addr(WebSocket)
	if httpAddr == "" {
		httpAddr = s.cfg.Transports.HTTP.Listen
	}
	if wsAddr == "" {
		wsAddr = s.cfg.Transports.WebSocket.Listen
	}
	api, ws, internal := advertised(s.cfg, httpAddr, wsAddr, s.Addr(Cluster))
	if err := s.node.SetAddresses(api, ws, internal); err != nil {
		// The next heartbeat writes them; the node is already in the cluster.
		s.log.Warn("cluster: advertise the bound addresses", "err", err)
	}
	return nil
}

// leaveCluster deletes the node's record and slot and releases its leases, so that the others see
// it gone at once rather than after node_ttl.
func (s *Server) leaveCluster() {
	if s.node == nil {
		return
	}
	s.relay.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clusterStopTimeout)
	defer cancel()
	if err := s.node.Stop(ctx); err != nil {
		s.log.Warn("cluster: leave", "err", err)
	}
	_ = s.engine.Close()
}

// ClusterNode is the node in the cluster (nil when cluster.enabled is off).
func (s *Server) ClusterNode() *cluster.Node { return s.node }
