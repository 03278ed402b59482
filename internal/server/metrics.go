package server

import (
	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/metrics"
	"github.com/strata-rtc/strata/internal/peer"
)

// serverMetrics wires the Prometheus metrics (transports.admin.metrics) into the server's parts;
// a nil one is metrics off, and every method then hands out nothing.
type serverMetrics struct{ m *metrics.Metrics }

// newMetrics builds the registry when the metrics are on and some admin listener serves them.
func newMetrics(cfg *config.Config) *serverMetrics {
	if !cfg.Transports.Admin.Metrics || !cfg.Transports.Admin.Running() {
		return nil
	}
	return &serverMetrics{m: metrics.New()}
}

// estimateObserver feeds the estimate histogram from the congestion controllers.
func (s *serverMetrics) estimateObserver() func(cc.Bitrate) {
	if s == nil {
		return nil
	}
	return s.m.ObserveEstimate
}

// peerOptions feed the RTT histogram from the PeerConnections' reception reports.
func (s *serverMetrics) peerOptions() []peer.Option {
	if s == nil {
		return nil
	}
	return []peer.Option{peer.WithRTTObserver(s.m.ObserveRTT)}
}

// register adds the collectors of the server's parts, and returns the registry to serve.
func (s *serverMetrics) register(src metrics.Sources) *metrics.Metrics {
	if s == nil {
		return nil
	}
	s.m.Register(src)
	return s.m
}
