package main

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/report"
)

// The cluster scenario's bar (issue 21): subscribers held with under 1 % freezes and loss.
const (
	clusterMaxLoss   = 0.01
	clusterMaxFrozen = 0.01
	// goalClusterGrowth: subscribers held clean grow near-linearly with nodes, at least this share
	// of linear.
	goalClusterGrowth = 0.8
	// goalClusterTraffic: the traffic between nodes is the publisher's rate × node pairs within
	// this share (headers, RTCP and retransmissions on top of the RTP the publisher sends).
	goalClusterTraffic = 0.25
)

// quality is the loss and the frozen share of the receive-only subscribers other than the apart
// one (whose link is limited on purpose): the mean loss ratio of their streams, and their video's
// frozen time over every video stream held for the whole hold (a stream also lives through the
// ramp-up, so this errs high).
func quality(r *report.Result) (loss, frozen float64) {
	q := qualityWhere(r, func(s report.Subscription) bool { return !s.Apart })
	return q.loss, q.frozen
}

// streamQuality is what quality measures, and the number of freezes, over some subscribers.
type streamQuality struct {
	loss, frozen float64
	freezes      uint64
}

// qualityWhere is quality over the receive-only subscribers keep accepts.
func qualityWhere(r *report.Result, keep func(report.Subscription) bool) streamQuality {
	subs := map[int]report.Subscription{}
	for _, s := range r.Subscriptions {
		subs[s.Index] = s
	}
	var q streamQuality
	var lossSum, frozenMs float64
	streams, videos := 0, 0
	for _, st := range r.Streams {
		if s, ok := subs[st.Subscription]; st.Owner >= 0 || ok && !keep(s) {
			continue
		}
		lossSum += st.LossRatio
		streams++
		if st.Kind == "video" {
			frozenMs += st.FreezeMs
			q.freezes += st.Freezes
			videos++
		}
	}
	if streams > 0 {
		q.loss = lossSum / float64(streams)
	}
	if hold := float64(r.Plan.Duration.Milliseconds()); videos > 0 && hold > 0 {
		q.frozen = frozenMs / (float64(videos) * hold)
	}
	return q
}

// clusterClean is a step where every client joined and received every stream, the subscribers
// (but the apart one) with loss and frozen time under 1 %, and a generator that kept real time.
func clusterClean(r *report.Result) bool {
	t := r.Totals
	loss, frozen := quality(r)
	return t.FailedJoins == 0 && t.CompleteShare == 1 && loss < clusterMaxLoss && frozen < clusterMaxFrozen && r.Generator.LateSkips == 0
}

// layerOf names the simulcast layer a video stream arrived at from its mean bitrate: the nearest
// of the publisher's layers on a log scale; "–" for nothing.
func layerOf(kbps float64) string {
	if kbps <= 0 {
		return "–"
	}
	best, dist := "", math.Inf(1)
	for _, l := range mediasrc.Layers {
		if d := math.Abs(math.Log(kbps / float64(l.Kbps))); d < dist {
			best, dist = l.RID, d
		}
	}
	return best
}

// subscriberLayers counts, per node, the layers the receive-only subscribers' video arrived at
// (the apart subscriber left out), and names the apart subscriber's layer and bitrate.
func subscriberLayers(r *report.Result, nodes int) (perNode []map[string]int, apart string, apartKbps float64) {
	perNode = make([]map[string]int, nodes)
	for i := range perNode {
		perNode[i] = map[string]int{}
	}
	subs := map[int]report.Subscription{}
	for _, s := range r.Subscriptions {
		subs[s.Index] = s
	}
	for _, st := range r.Streams {
		s, ok := subs[st.Subscription]
		if !ok || st.Kind != "video" || s.Owner >= 0 {
			continue
		}
		l := layerOf(st.KbitPerSec)
		switch {
		case s.Apart:
			apart, apartKbps = l, st.KbitPerSec
		case s.Server >= 0 && s.Server < nodes:
			perNode[s.Server][l]++
		}
	}
	return perNode, apart, apartKbps
}

// formatLayers is "f×16 h×2" in the layers' order, highest first.
func formatLayers(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	order := map[string]int{"–": len(mediasrc.Layers)}
	for i, l := range mediasrc.Layers {
		order[l.RID] = i
	}
	sort.Slice(keys, func(i, j int) bool { return order[keys[i]] < order[keys[j]] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, " ")
}

// layersChanged is how many subscribers on the nodes other than the apart one are on another
// layer in the limited step than in the step of as many nodes without it.
func layersChanged(base, limited *report.Result, nodes int) int {
	b, _, _ := subscriberLayers(base, nodes)
	l, _, _ := subscriberLayers(limited, nodes)
	changed := 0
	for i := 0; i < nodes; i++ {
		if i == clusterApartNode {
			continue
		}
		diff := 0
		for k, v := range b[i] {
			diff += abs(v - l[i][k])
		}
		for k, v := range l[i] {
			if _, ok := b[i][k]; !ok {
				diff += v
			}
		}
		changed += diff / 2
	}
	return changed
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// expectedMbps is the traffic between nodes the design predicts: every layer of the one feed
// crosses once from node 1 to each other node.
func (s *clusterStep) expectedMbps() float64 { return s.pubMbps * float64(s.nodes-1) }

// writeCluster tabulates the steps, the traffic between nodes and the limited step.
func writeCluster(b *strings.Builder, c config, o *outcome) {
	cs := c.cluster
	fmt.Fprintf(b, "Each step is a fresh cluster of strata nodes (a network namespace each, on one bridge, over a real redis-server); one simulcast publisher on node 1, %d subscribers per node asking for the top layer, held %v. Clean: every join, every stream, loss and frozen time under 1 %%, a generator that kept real time. Janus has no cluster: strata only.\n\n", cs.PerNode, c.scale.Hold)
	if len(o.cluster) == 0 {
		b.WriteString("No step completed.\n\n")
		return
	}
	b.WriteString("| nodes | subscribers | clean | loss % | frozen % | freezes | late skips | CPU % per node (steady) | total CPU % | generator CPU % | RSS MB per node (steady) | between nodes Mbit/s | publisher × pairs Mbit/s | measured / expected | layers per node | load avg |\n")
	b.WriteString("|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---|---:|\n")
	for _, s := range o.cluster {
		r := s.res
		var cpu, rss []string
		var total float64
		for _, n := range r.Nodes {
			cpu = append(cpu, fmt.Sprintf("%.0f", n.SteadyCPUPct))
			rss = append(rss, fmt.Sprintf("%.0f", float64(n.SteadyRSSBytes)/(1<<20)))
			total += n.SteadyCPUPct
		}
		if len(r.Nodes) == 0 && r.Totals.SteadySeconds > 0 { // one node: the run's own figures
			total = 100 * r.Server.SteadyCPUSeconds / r.Totals.SteadySeconds
			cpu = []string{fmt.Sprintf("%.0f", total)}
			rss = []string{fmt.Sprintf("%.0f", float64(r.Server.SteadyRSSBytes)/(1<<20))}
		}
		layers, _, _ := subscriberLayers(r, s.nodes)
		var lay []string
		for i, m := range layers {
			lay = append(lay, fmt.Sprintf("%d: %s", i+1, formatLayers(m)))
		}
		nodes := fmt.Sprint(s.nodes)
		if s.limited {
			nodes += " + limited"
		}
		if s.lossy {
			nodes += fmt.Sprintf(" + %d %% loss", clusterLossPercent)
		}
		between, ratioText := "–", "–"
		if s.linksOK {
			between = fmt.Sprintf("%.2f", s.links.total())
			if s.nodes > 1 && s.expectedMbps() > 0 {
				ratioText = fmt.Sprintf("%.2f", s.links.total()/s.expectedMbps())
			}
		}
		subs := fmt.Sprint(r.Totals.Subscribers)
		if r.Totals.Subscribers != r.Plan.Subscribers {
			subs = fmt.Sprintf("%d of %d", r.Totals.Subscribers, r.Plan.Subscribers)
		}
		loss, frozen := quality(r)
		gen := 0.0
		if r.Totals.SteadySeconds > 0 {
			gen = 100 * r.Generator.SteadyCPUSeconds / r.Totals.SteadySeconds
		}
		fmt.Fprintf(b, "| %s | %s | %v | %.3f | %.3f | %d | %d | %s | %.0f | %.0f | %s | %s | %.2f | %s | %s | %.1f |\n", nodes, subs,
			clusterClean(r), 100*loss, 100*frozen, r.Totals.Freezes, r.Generator.LateSkips, strings.Join(cpu, " / "), total, gen,
			strings.Join(rss, " / "), between, s.expectedMbps(), ratioText, strings.Join(lay, "; "), r.Machine.LoadAvg)
	}
	b.WriteString("\n")
	for _, s := range o.cluster {
		if !s.linksOK || s.nodes < 2 {
			continue
		}
		var pairs []string
		for i, row := range s.links.mbps {
			for j, v := range row {
				if i != j {
					pairs = append(pairs, fmt.Sprintf("%d→%d %.2f", i+1, j+1, v))
				}
			}
		}
		label := ""
		if s.limited {
			label = " (limited step)"
		}
		if s.lossy {
			label = " (lossy step)"
		}
		fmt.Fprintf(b, "- between nodes, %d nodes%s, Mbit/s: %s (publisher sent %.2f)", s.nodes, label, strings.Join(pairs, ", "), s.pubMbps)
		if s.relayErr != nil {
			fmt.Fprintf(b, "; the relays' counters could not be read: %v.\n", s.relayErr)
			continue
		}
		r := s.relay
		fmt.Fprintf(b, "; the relays' own counters over the run: %d packets sent, %d asked again (NACK), %d retransmitted, %d keyframe requests from edges.\n",
			r.PacketsSent, r.NACKsReceived, r.Retransmitted, r.KeyframeRequestsReceived)
	}
	writeClusterLimited(b, c, o)
	writeClusterLossy(b, o)
	for _, n := range o.notes {
		fmt.Fprintf(b, "- note: %s\n", n)
	}
	fmt.Fprintf(b, "\nReports in `%s/<N>-nodes[-limited|-lossy]/report.md` (per node in its Nodes table); each node's log beside it.\n\n", clusterScenario)
}

// limitedPair is the limited step and the step of as many nodes without the limit.
func limitedPair(o *outcome) (base, limited *clusterStep) {
	return stepWithBase(o, func(s *clusterStep) bool { return s.limited })
}

// stepWithBase is the last step pick takes and the plain step (neither limited nor lossy) of as
// many nodes, to compare it with.
func stepWithBase(o *outcome, pick func(*clusterStep) bool) (base, step *clusterStep) {
	for _, s := range o.cluster {
		if pick(s) {
			step = s
		}
	}
	if step == nil {
		return nil, nil
	}
	for _, s := range o.cluster {
		if !s.limited && !s.lossy && s.nodes == step.nodes {
			base = s
		}
	}
	return base, step
}

func writeClusterLimited(b *strings.Builder, c config, o *outcome) {
	base, lim := limitedPair(o)
	if lim == nil {
		return
	}
	_, apart, kbps := subscriberLayers(lim.res, lim.nodes)
	var loss float64
	n := 0
	for _, st := range lim.res.Streams {
		for _, s := range lim.res.Subscriptions {
			if s.Apart && s.Index == st.Subscription {
				loss += st.LossRatio
				n++
			}
		}
	}
	if n > 0 {
		loss /= float64(n)
	}
	through := 0.0
	if lim.linksOK && clusterApartNode < len(lim.links.apart) {
		through = lim.links.apart[clusterApartNode]
	}
	fmt.Fprintf(b, "- limited step: one more subscriber on node %d behind a %d kbit/s link (tbf on the node's link, matching its own address; %.2f Mbit/s went through it in the steady window) received layer %s (%.0f kbit/s of video, mean over its life; loss %.2f %%).",
		clusterApartNode+1, c.cluster.LimitKbps, through, apart, kbps, 100*loss)
	if base != nil {
		fmt.Fprintf(b, " Subscribers on the other nodes on another layer than without it: %d.", layersChanged(base.res, lim.res, lim.nodes))
	}
	b.WriteString("\n")
}

func nodesLabel(n int) string {
	if n == 1 {
		return "1 node"
	}
	return fmt.Sprintf("%d nodes", n)
}

// clusterGoals are the scenario's verdict lines.
func clusterGoals(c config, o *outcome) []goal {
	if len(o.cluster) == 0 {
		return nil
	}
	var out []goal
	perNode := c.cluster.PerNode
	growth := goal{name: "cluster: subscribers held clean, over one node's (near-linear growth with nodes)", scenario: o.name, where: "no clean step",
		bound: goalClusterGrowth * float64(c.cluster.MaxNodes), format: "%.2f", higher: true}
	for _, s := range o.cluster {
		if !s.limited && !s.lossy && clusterClean(s.res) && perNode > 0 {
			if v := float64(s.res.Totals.Subscribers) / float64(perNode); v > growth.value {
				growth.value, growth.where = v, nodesLabel(s.nodes)
			}
		}
	}
	out = append(out, growth)
	traffic := goal{name: "cluster: traffic between nodes off the publisher's rate × node pairs, |measured / expected − 1|", scenario: o.name,
		value: math.NaN(), bound: goalClusterTraffic, format: "%.2f"}
	for _, s := range o.cluster {
		if s.nodes < 2 || !s.linksOK || s.expectedMbps() <= 0 {
			continue
		}
		v := math.Abs(s.links.total()/s.expectedMbps() - 1)
		if math.IsNaN(traffic.value) || v > traffic.value {
			traffic.value, traffic.where = v, nodesLabel(s.nodes)
			if s.limited {
				traffic.where += " + limited"
			}
			if s.lossy {
				traffic.where += " + loss"
			}
		}
	}
	if !math.IsNaN(traffic.value) || o.cluster[len(o.cluster)-1].nodes > 1 {
		out = append(out, traffic)
	}
	if base, lim := limitedPair(o); lim != nil {
		where := nodesLabel(lim.nodes)
		changed := goal{name: "cluster: subscribers on other nodes whose layer changed with one limited on node 2", scenario: o.name, where: where, value: math.NaN(), format: "%.0f"}
		if base != nil {
			changed.value = float64(layersChanged(base.res, lim.res, lim.nodes))
		}
		_, apart, _ := subscriberLayers(lim.res, lim.nodes)
		top := 0.0
		if apart == mediasrc.Layers[0].RID || apart == "" {
			top = 1
		}
		out = append(out, changed, goal{name: "cluster: the limited subscriber kept the top layer (1 = the limit did not bite)", scenario: o.name, where: where, value: top, format: "%.0f"})
	}
	return append(out, lossyGoals(o)...)
}
