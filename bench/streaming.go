package main

import (
	"fmt"
	"strings"

	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
)

// The fan-out through the streaming plugin: one rtp mountpoint, created through the API on ports
// the server picks, fed plain RTP by the generator (VP8 at 1280x720, the fan-out publisher's top
// layer, ~1.2 Mbit/s, and Opus), watched by N viewers (watch; the plugin offers, the viewer
// answers with start). N doubles as in the videoroom fan-out, until a run is not clean. The same
// invocation's videoroom fan-out, when it ran, is set beside it: a mountpoint should cost no more
// per forwarded gigabit than a videoroom publisher's subscribers.
const streamingScenario = "streaming-fanout"

// streamingStrataYAML turns strata's streaming plugin on without the sample mountpoints of the
// default configuration (the benchmark creates its own through the API).
const streamingStrataYAML = "plugins: {streaming: {enabled: true, mountpoints: []}}"

func streamingFanOut(sc scale, server string) scenario {
	var plans []plan.Plan
	for n := max(1, sc.FanOutMin); n <= sc.FanOutMax; n *= 2 {
		p := plan.StreamingFanOut(server, n)
		p.Duration, p.Warmup = sc.Hold, sc.Warmup
		plans = append(plans, p)
	}
	return scenario{name: streamingScenario, title: "Streaming fan-out: one rtp mountpoint (VP8 1280x720 + Opus, plain RTP in) to N viewers",
		plans: plans, sweep: true, strataYAML: streamingStrataYAML}
}

// writeStreamingAgainstVideoroom sets each server's streaming fan-out beside its own videoroom
// fan-out of the same run, step by step: CPU per forwarded gigabit and memory per receiving
// PeerConnection.
func writeStreamingAgainstVideoroom(b *strings.Builder, c config, streaming *outcome, all []*outcome) {
	var vr *outcome
	for _, o := range all {
		if o.name == "fanout" {
			vr = o
		}
	}
	if vr == nil {
		b.WriteString("The videoroom fan-out did not run in this invocation (`--only fanout," + streamingScenario + "` runs both), so there is nothing to set the streaming figures beside.\n\n")
		return
	}
	b.WriteString("Beside the videoroom fan-out of this run (same N, same server; ratio streaming/videoroom, below 1: the mountpoint costs less):\n\n")
	b.WriteString("| N | target | streaming CPU s/Gbit | videoroom CPU s/Gbit | ratio | streaming RSS/viewer kB | videoroom RSS/PC kB | ratio | load avg streaming / videoroom |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, t := range c.targets {
		for _, s := range streaming.runs[t] {
			v := atReceivers(vr.runs[t], s.Plan.Receivers())
			if v == nil {
				continue
			}
			fmt.Fprintf(b, "| %d | %s | %.3f | %.3f | %s | %.1f | %.1f | %s | %.1f / %.1f |\n", s.Plan.Receivers(), t,
				s.Totals.CPUSecondsPerGbit, v.Totals.CPUSecondsPerGbit, ratio(s.Totals.CPUSecondsPerGbit, v.Totals.CPUSecondsPerGbit),
				s.Totals.RSSPerPCBytes/1024, v.Totals.RSSPerPCBytes/1024, ratio(s.Totals.RSSPerPCBytes, v.Totals.RSSPerPCBytes),
				s.Machine.LoadAvg, v.Machine.LoadAvg)
		}
	}
	b.WriteString("\n")
}

// atReceivers is the run with n receivers, or nil.
func atReceivers(runs []*report.Result, n int) *report.Result {
	for _, r := range runs {
		if r.Plan.Receivers() == n {
			return r
		}
	}
	return nil
}
