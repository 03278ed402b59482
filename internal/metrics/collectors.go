package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/plugins/audiobridge"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Every collector below reads its source once per scrape and reports const metrics: the counters
// are the sources' own (monotonic there), so nothing is kept twice. Labels take a handful of fixed
// values each (plugin package, direction, media kind, kind of change): never a session, handle or room id.

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// describe sends every desc of a collector.
func describe(ch chan<- *prometheus.Desc, ds ...*prometheus.Desc) {
	for _, d := range ds {
		ch <- d
	}
}

func counter(d *prometheus.Desc, v uint64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

// The gateway: sessions, handles, events that found no client.
var (
	sessionsDesc      = desc("sessions", "Live Janus sessions.")
	handlesDesc       = desc("handles", "Live handles, by plugin package.", "plugin")
	eventsDroppedDesc = desc("events_dropped_total", "Events the gateway could not deliver: their session had no transport.")
)

type gatewayCollector struct{ g Gateway }

func (c gatewayCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, sessionsDesc, handlesDesc, eventsDroppedDesc)
}

func (c gatewayCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- gauge(sessionsDesc, float64(c.g.SessionCount()))
	for name, n := range c.g.HandleCounts() {
		ch <- gauge(handlesDesc, float64(n), name)
	}
	ch <- counter(eventsDroppedDesc, c.g.DroppedEvents())
}

// The PeerConnections and what crosses them. direction is "in" for what strata receives and "out"
// for what it sends, RTCP requests included: nacked_packets_total{direction="out"} are the
// retransmissions strata asked for, i.e. the loss on what it receives.
var (
	peersDesc        = desc("peer_connections", "Open PeerConnections.")
	peersCreatedDesc = desc("peer_connections_created_total", "PeerConnections created.")
	packetsDesc      = desc("rtp_packets_total", "RTP packets received (in) and sent (out), retransmissions and padding included.", "direction", "kind")
	bytesDesc        = desc("rtp_bytes_total", "RTP bytes (headers and payload, after SRTP decryption / before encryption) received and sent.", "direction", "kind")
	nacksDesc        = desc("nacked_packets_total", "Sequence numbers asked for again in NACKs: by peers (in), by strata (out).", "direction")
	plisDesc         = desc("plis_total", "Picture loss indications: from peers (in), from strata (out).", "direction")
	firsDesc         = desc("firs_total", "Full intra requests: from peers (in), from strata (out).", "direction")
	lostDesc         = desc("reported_lost_packets_total", "Packets of strata's streams that peers reported lost (cumulative loss of their reception reports).")
)

type peerCollector struct{ p Peers }

func (c peerCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, peersDesc, peersCreatedDesc, packetsDesc, bytesDesc, nacksDesc, plisDesc, firsDesc, lostDesc)
}

func (c peerCollector) Collect(ch chan<- prometheus.Metric) {
	t := c.p.Totals()
	ch <- gauge(peersDesc, float64(t.Live))
	ch <- counter(peersCreatedDesc, t.Created)
	for dir, name := range []string{peer.In: "in", peer.Out: "out"} {
		for kind := range peer.NumKinds {
			r := t.RTP[dir][kind]
			ch <- counter(packetsDesc, r.Packets, name, kind.String())
			ch <- counter(bytesDesc, r.Bytes, name, kind.String())
		}
	}
	for _, d := range []struct {
		desc    *prometheus.Desc
		in, out uint64
	}{
		{nacksDesc, t.NACKsIn, t.NACKsOut},
		{plisDesc, t.PLIsIn, t.PLIsOut},
		{firsDesc, t.FIRsIn, t.FIRsOut},
	} {
		ch <- counter(d.desc, d.in, "in")
		ch <- counter(d.desc, d.out, "out")
	}
	ch <- counter(lostDesc, t.ReportedLost)
}

// The SFU's decisions, process-wide (sfu.ReadTotals).
var (
	switchesDesc  = desc("layer_switches_total", "Simulcast/SVC layer switches forwarded to subscribers, up or down.", "direction")
	decisionsDesc = desc("allocator_decisions_total", "Layer target changes made by the subscribers' allocators: up, down, or pause (no layer fits).", "change")
)

type sfuCollector struct{}

func (sfuCollector) Describe(ch chan<- *prometheus.Desc) { describe(ch, switchesDesc, decisionsDesc) }

func (sfuCollector) Collect(ch chan<- prometheus.Metric) {
	t := sfu.ReadTotals()
	ch <- counter(switchesDesc, t.SwitchesUp, "up")
	ch <- counter(switchesDesc, t.SwitchesDown, "down")
	ch <- counter(decisionsDesc, t.DecisionsUp, "up")
	ch <- counter(decisionsDesc, t.DecisionsDown, "down")
	ch <- counter(decisionsDesc, t.DecisionsPause, "pause")
}

// Rooms and their members, for the plugins that have them (plugin.Counter).
var (
	roomsDesc        = desc("rooms", "Rooms, by plugin package.", "plugin")
	participantsDesc = desc("participants", "Participants joined to rooms, by plugin package.", "plugin")
	publishersDesc   = desc("publishers", "Participants whose PeerConnection sends media, by plugin package.", "plugin")
	subscribersDesc  = desc("subscribers", "Handles receiving a room's media, by plugin package.", "plugin")
)

type pluginCollector struct {
	names    []string
	counters []plugin.Counter
}

// newPluginCollector returns nil when no plugin has rooms.
func newPluginCollector(ps []plugin.Plugin) *pluginCollector {
	c := &pluginCollector{}
	for _, p := range ps {
		if pc, ok := p.(plugin.Counter); ok {
			c.names = append(c.names, p.Package())
			c.counters = append(c.counters, pc)
		}
	}
	if len(c.counters) == 0 {
		return nil
	}
	return c
}

func (c *pluginCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, roomsDesc, participantsDesc, publishersDesc, subscribersDesc)
}

func (c *pluginCollector) Collect(ch chan<- prometheus.Metric) {
	for i, pc := range c.counters {
		n, name := pc.Counts(), c.names[i]
		ch <- gauge(roomsDesc, float64(n.Rooms), name)
		ch <- gauge(participantsDesc, float64(n.Participants), name)
		ch <- gauge(publishersDesc, float64(n.Publishers), name)
		ch <- gauge(subscribersDesc, float64(n.Subscribers), name)
	}
}

// The audio bridge's mixers (audiobridge.MixerTotals).
var (
	mixersDesc       = desc("audiobridge_mixers", "Running audio bridge mixers (rooms with members, forwarders or files).")
	mixTicksDesc     = desc("audiobridge_mixer_ticks_total", "20 ms periods mixed.")
	mixLateDesc      = desc("audiobridge_mixer_late_ticks_total", "Periods that began over a period late.")
	mixSkippedDesc   = desc("audiobridge_mixer_skipped_ticks_total", "Periods left out to catch up after falling behind.")
	mixEncodingsDesc = desc("audiobridge_mixer_encodings_total", "Opus frames the mixers encoded.")
	mixBusyDesc      = desc("audiobridge_mixer_busy_seconds_total", "Time the mixers spent mixing, encoding and sending; its rate divided by audiobridge_mixers is their load.")
)

// mixerSource is the audio bridge (*audiobridge.Plugin).
type mixerSource interface {
	MixerTotals() audiobridge.MixerTotals
}

type mixerCollector struct{ srcs []mixerSource }

func newMixerCollector(ps []plugin.Plugin) *mixerCollector {
	c := &mixerCollector{}
	for _, p := range ps {
		if m, ok := p.(mixerSource); ok {
			c.srcs = append(c.srcs, m)
		}
	}
	if len(c.srcs) == 0 {
		return nil
	}
	return c
}

func (c *mixerCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, mixersDesc, mixTicksDesc, mixLateDesc, mixSkippedDesc, mixEncodingsDesc, mixBusyDesc)
}

func (c *mixerCollector) Collect(ch chan<- prometheus.Metric) {
	var t audiobridge.MixerTotals
	for _, s := range c.srcs {
		m := s.MixerTotals()
		t.Running += m.Running
		t.Ticks, t.Late, t.Skipped = t.Ticks+m.Ticks, t.Late+m.Late, t.Skipped+m.Skipped
		t.Encodings += m.Encodings
		t.Busy += m.Busy
	}
	ch <- gauge(mixersDesc, float64(t.Running))
	ch <- counter(mixTicksDesc, t.Ticks)
	ch <- counter(mixLateDesc, t.Late)
	ch <- counter(mixSkippedDesc, t.Skipped)
	ch <- counter(mixEncodingsDesc, t.Encodings)
	ch <- prometheus.MustNewConstMetric(mixBusyDesc, prometheus.CounterValue, t.Busy.Seconds())
}
