// Package metrics exports strata's state as Prometheus metrics (docs/METRICS.md), through the
// official client on a registry of its own (never the global one, so tests and embedders can run
// several servers in one process). Almost everything is read at scrape time from counters the
// gateway, the PeerConnections, the SFU and the plugins keep anyway, so the media path does no
// work for the metrics; the two histograms are observed per RTCP report and per congestion
// feedback message, never per packet, and observing allocates nothing.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// namespace prefixes every metric strata defines (the Go runtime's and the process's keep theirs).
const namespace = "strata"

// Gateway is what the metrics read from the Janus core (*gateway.Gateway).
type Gateway interface {
	SessionCount() int
	HandleCounts() map[string]int
	DroppedEvents() uint64
}

// Peers is what the metrics read from the PeerConnection factory (*peer.Factory).
type Peers interface {
	Totals() peer.Totals
}

// Sources are the parts of a server the metrics read. Any may be nil (that part is left out).
type Sources struct {
	Gateway Gateway
	Peers   Peers
	Plugins []plugin.Plugin
	// Cluster is the cluster node and Relay its media relay; nil on a server without a cluster.
	Cluster Cluster
	Relay   Relay
}

// Metrics is one server's registry.
type Metrics struct {
	reg      *prometheus.Registry
	rtt      prometheus.Histogram
	estimate prometheus.Histogram
}

// New makes a registry holding the Go runtime and process collectors and the two histograms; the
// rest is added by Register once the server's parts exist (the histograms' observers must be
// handed to the PeerConnection factory before that).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		rtt: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "rtt_seconds",
			Help:    "Round-trip times to peers, from their reception reports about the streams strata sends.",
			Buckets: []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2},
		}),
		// In bytes per second, Prometheus's base unit; the buckets are round bit rates.
		estimate: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "bwe_estimate_bytes_per_second",
			Help:    "Send-side bandwidth estimates towards peers, one observation per transport-wide congestion feedback message.",
			Buckets: bitRates(50e3, 100e3, 250e3, 500e3, 1e6, 2e6, 3e6, 5e6, 10e6, 20e6, 50e6),
		}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.rtt, m.estimate,
	)
	return m
}

// ObserveRTT records a round-trip time (peer.WithRTTObserver).
func (m *Metrics) ObserveRTT(d time.Duration) { m.rtt.Observe(d.Seconds()) }

// ObserveEstimate records a bandwidth estimate (bwe.PeerOptions).
func (m *Metrics) ObserveEstimate(b cc.Bitrate) { m.estimate.Observe(float64(b) / 8) }

// bitRates turns bit rates into bucket bounds in bytes per second.
func bitRates(bps ...float64) []float64 {
	for i := range bps {
		bps[i] /= 8
	}
	return bps
}

// Register adds the collectors of a server's parts. It panics if called twice: the collectors
// would clash (a bug, not a condition to handle).
func (m *Metrics) Register(src Sources) {
	cs := []prometheus.Collector{sfuCollector{}}
	if src.Gateway != nil {
		cs = append(cs, gatewayCollector{src.Gateway})
	}
	if src.Peers != nil {
		cs = append(cs, peerCollector{src.Peers})
	}
	if src.Cluster != nil {
		cs = append(cs, clusterCollector{src.Cluster})
	}
	if src.Relay != nil {
		cs = append(cs, relayCollector{src.Relay})
	}
	if pc := newPluginCollector(src.Plugins); pc != nil {
		cs = append(cs, pc)
	}
	if mc := newMixerCollector(src.Plugins); mc != nil {
		cs = append(cs, mc)
	}
	m.reg.MustRegister(cs...)
}

// Registry is the registry, for tests that gather it directly.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format (or OpenMetrics, if the scraper asks
// for it). Only GET and HEAD are served: anything else is 405 with an Allow header, so a client
// that posts to it learns at once that this is not the admin API. A failing collector is an
// HTTP 500 naming it, never a partial page that would read as zeros.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.HTTPErrorOnError,
		EnableOpenMetrics: true,
		// A scrape is cheap, but a client opening many at once must not pile them up.
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed: the metrics are read with GET", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}
