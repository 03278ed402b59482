package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/plugins/audiobridge"
)

type fakeGateway struct{}

func (fakeGateway) SessionCount() int { return 3 }
func (fakeGateway) HandleCounts() map[string]int {
	return map[string]int{"janus.plugin.videoroom": 4, "janus.plugin.echotest": 0}
}
func (fakeGateway) DroppedEvents() uint64 { return 7 }

type fakePeers struct{}

func (fakePeers) Totals() peer.Totals {
	t := peer.Totals{Live: 2, Created: 5, NACKsIn: 1, NACKsOut: 2, PLIsIn: 3, PLIsOut: 4, FIRsIn: 5, FIRsOut: 6, ReportedLost: 9}
	t.RTP[peer.In][peer.KindAudio] = peer.RTPTotals{Packets: 100, Bytes: 1000}
	t.RTP[peer.Out][peer.KindVideo] = peer.RTPTotals{Packets: 200, Bytes: 2000}
	return t
}

// fakeRooms is a plugin with rooms and a mixer.
type fakeRooms struct{ plugin.Plugin }

func (fakeRooms) Package() string { return "janus.plugin.fake" }
func (fakeRooms) Counts() plugin.Counts {
	return plugin.Counts{Rooms: 2, Participants: 5, Publishers: 3, Subscribers: 8}
}
func (fakeRooms) MixerTotals() audiobridge.MixerTotals {
	return audiobridge.MixerTotals{Running: 1, Ticks: 50, Late: 1, Skipped: 2, Encodings: 100, Busy: 250 * time.Millisecond}
}

func newTestMetrics(t *testing.T) *Metrics {
	t.Helper()
	m := New()
	m.Register(Sources{Gateway: fakeGateway{}, Peers: fakePeers{}, Plugins: []plugin.Plugin{fakeRooms{}}})
	return m
}

// Every collector reports its source's values under its documented names and labels.
func TestCollectors(t *testing.T) {
	m := newTestMetrics(t)
	m.ObserveRTT(40 * time.Millisecond)
	m.ObserveEstimate(1_500_000)
	want := `
# HELP strata_sessions Live Janus sessions.
# TYPE strata_sessions gauge
strata_sessions 3
# HELP strata_handles Live handles, by plugin package.
# TYPE strata_handles gauge
strata_handles{plugin="janus.plugin.echotest"} 0
strata_handles{plugin="janus.plugin.videoroom"} 4
# HELP strata_peer_connections Open PeerConnections.
# TYPE strata_peer_connections gauge
strata_peer_connections 2
# HELP strata_nacked_packets_total Sequence numbers asked for again in NACKs: by peers (in), by strata (out).
# TYPE strata_nacked_packets_total counter
strata_nacked_packets_total{direction="in"} 1
strata_nacked_packets_total{direction="out"} 2
# HELP strata_rtp_bytes_total RTP bytes (headers and payload, after SRTP decryption / before encryption) received and sent.
# TYPE strata_rtp_bytes_total counter
strata_rtp_bytes_total{direction="in",kind="audio"} 1000
strata_rtp_bytes_total{direction="in",kind="other"} 0
strata_rtp_bytes_total{direction="in",kind="video"} 0
strata_rtp_bytes_total{direction="out",kind="audio"} 0
strata_rtp_bytes_total{direction="out",kind="other"} 0
strata_rtp_bytes_total{direction="out",kind="video"} 2000
# HELP strata_rooms Rooms, by plugin package.
# TYPE strata_rooms gauge
strata_rooms{plugin="janus.plugin.fake"} 2
# HELP strata_subscribers Handles receiving a room's media, by plugin package.
# TYPE strata_subscribers gauge
strata_subscribers{plugin="janus.plugin.fake"} 8
# HELP strata_audiobridge_mixer_busy_seconds_total Time the mixers spent mixing, encoding and sending; its rate divided by audiobridge_mixers is their load.
# TYPE strata_audiobridge_mixer_busy_seconds_total counter
strata_audiobridge_mixer_busy_seconds_total 0.25
`
	names := []string{"strata_sessions", "strata_handles", "strata_peer_connections", "strata_nacked_packets_total", "strata_rtp_bytes_total",
		"strata_rooms", "strata_subscribers", "strata_audiobridge_mixer_busy_seconds_total"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	for name, n := range map[string]int{"strata_rtt_seconds": 1, "strata_bwe_estimate_bytes_per_second": 1,
		"strata_rtp_packets_total": 6, "strata_layer_switches_total": 2, "strata_allocator_decisions_total": 3} {
		if got, err := testutil.GatherAndCount(m.Registry(), name); err != nil || got != n {
			t.Errorf("%s: %d series (%v), want %d", name, got, err, n)
		}
	}
	if problems, err := testutil.GatherAndLint(m.Registry()); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// Observing the histograms allocates nothing: they are fed from RTCP and feedback handlers.
func TestObserveAllocatesNothing(t *testing.T) {
	m := New()
	if n := testing.AllocsPerRun(100, func() {
		m.ObserveRTT(30 * time.Millisecond)
		m.ObserveEstimate(2_000_000)
	}); n != 0 {
		t.Errorf("%v allocations per observation", n)
	}
}

func TestHandler(t *testing.T) {
	h := newTestMetrics(t).Handler()
	for _, c := range []struct {
		method string
		status int
	}{{http.MethodGet, 200}, {http.MethodHead, 200}, {http.MethodPost, 405}, {http.MethodPut, 405}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, "/metrics", nil))
		if rec.Code != c.status {
			t.Errorf("%s: %d, want %d", c.method, rec.Code, c.status)
		}
		if c.status == 200 && c.method == http.MethodGet && !strings.Contains(rec.Body.String(), "strata_sessions 3") {
			t.Errorf("GET body lacks strata_sessions: %.300s", rec.Body.String())
		}
	}
}
