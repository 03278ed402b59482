package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-rtc/strata/internal/load/report"
)

// writeUplink renders the uplink scenario: the comparison per cap (medians over repetitions), then
// every call. It also writes uplink/summary.csv and uplink/summary.json.
func writeUplink(b *strings.Builder, c config, runs []*uplinkRun) {
	u := c.uplink
	echo := "echoing audio and video back"
	if u.noEcho {
		echo = "asked to send nothing back (--uplink-no-echo)"
	}
	fmt.Fprintf(b, "%s; uplink rate limit: tbf at each cap, bucket %d bytes, queue %v (tbf latency); warm-up %v, window %v; "+
		"same janus.js echotest page (720p30 fake camera, audio and video, no bitrate cap) for every server, the echotest %s.\n\n",
		chromiumVersion(), u.burst, u.queue, u.warmup, u.window, echo)
	targets := uplinkTargets(c)
	b.WriteString("| cap kbit/s |")
	for _, m := range []string{"share", "RTT p50/p95 ms", "queue p50/p95 ms"} {
		for _, t := range targets {
			fmt.Fprintf(b, " %s %s |", m, targetLabel(t))
		}
		if m == "share" && slices.Contains(targets, "strata") && slices.Contains(targets, "janus") {
			b.WriteString(" strata − Janus |")
		}
	}
	b.WriteString("\n|---:|")
	for range 3 * len(targets) {
		b.WriteString("---:|")
	}
	if slices.Contains(targets, "strata") && slices.Contains(targets, "janus") {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, capKbps := range u.caps {
		med := map[string]*uplinkRun{}
		for _, t := range targets {
			med[t] = medianRun(runs, t, capKbps)
		}
		fmt.Fprintf(b, "| %d |", capKbps)
		for _, t := range targets {
			fmt.Fprintf(b, " %s |", fmtShare(med[t]))
		}
		if slices.Contains(targets, "strata") && slices.Contains(targets, "janus") {
			fmt.Fprintf(b, " %s |", shareDiff(med["strata"], med["janus"]))
		}
		for _, t := range targets {
			fmt.Fprintf(b, " %s |", fmtRTT(med[t]))
		}
		for _, t := range targets {
			fmt.Fprintf(b, " %s |", fmtQueue(med[t]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nMedian call per cap and server (by share). RTT -1: the server's receiver reports gave Chromium no round-trip time. " +
		"chromium: the reference, Chromium sending to another Chromium (libwebrtc's own transport-wide feedback and reports).\n")
	b.WriteString("\nEvery call (share: video bytesSent rate / cap; wire: candidate-pair bytesSent rate / cap; RTT: " +
		"remote-inbound-rtp, one value per receiver report; pair: STUN round trips; queue: tbf backlog / rate; drop: packets tbf dropped; avail.: availableOutgoingBitrate; " +
		"BW-lim.: share of the window with qualityLimitationReason bandwidth; load: highest 1-minute load average):\n\n")
	b.WriteString("| cap | server | run | video kbit/s | share | wire | RTT p50/p95 ms | pair RTT p50/p95 ms | queue p50/p95 ms | drop % | avail. kbit/s | target kbit/s | loss % | rtx % | NACKs | BW-lim. % | CPU-lim. % | fps | resolution | load |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, r := range runs {
		if r.Err != "" {
			fmt.Fprintf(b, "| %d | %s | %d | failed: %s | | | | | | | | | | | | | | | | %.1f |\n", r.CapKbps, r.Target, r.Rep,
				strings.ReplaceAll(r.Err, "|", "/"), r.Summary.LoadMax)
			continue
		}
		s := r.Summary
		fmt.Fprintf(b, "| %d | %s | %d | %.0f | %.2f | %.2f | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | %.2f | %.0f | %.0f | %.2f | %.1f | %.0f | %.0f | %.0f | %.1f | %s | %.1f |\n",
			r.CapKbps, r.Target, r.Rep, s.VideoKbps, s.Share, s.WireShare, s.RTTP50, s.RTTP95, s.PairRTTP50, s.PairRTTP95,
			s.QueueP50, s.QueueP95, s.DropPct, s.AvailKbps, s.TargetKbps, s.LossPct, s.RtxPct, s.NACKs, s.BWLimitedPct, s.CPULimitedPct, s.FPS, s.Resolution, s.LoadMax)
	}
	b.WriteString("\nPer call: `uplink/<server>/<cap>k/` has `samples.json` (every getStats sample), `summary.json`, " +
		"the page's `console.log`, the server's log, `queue.json` (the rate limit's samples) and `tc.txt` (its counters at the end); `uplink/summary.csv` has every call.\n\n")
	dir := filepath.Join(c.out, "uplink")
	_ = writeJSON(filepath.Join(dir, "summary.json"), runs)
	if err := writeUplinkCSV(filepath.Join(dir, "summary.csv"), runs); err != nil {
		fmt.Fprintf(b, "- note: summary.csv: %v\n", err)
	}
	if err := writeUplinkPlots(c, dir, runs); err != nil {
		fmt.Fprintf(b, "- note: plots: %v\n", err)
	} else {
		b.WriteString("Plots: `uplink/compare-share.svg`, `uplink/compare-rtt.svg`.\n\n")
	}
}

// medianRun is the call with the median share among the successful repetitions of (target, cap).
func medianRun(runs []*uplinkRun, target string, capKbps int) *uplinkRun {
	var ok []*uplinkRun
	for _, r := range runs {
		if r.Target == target && r.CapKbps == capKbps && r.Err == "" {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	slices.SortFunc(ok, func(a, b *uplinkRun) int {
		switch {
		case a.Summary.Share < b.Summary.Share:
			return -1
		case a.Summary.Share > b.Summary.Share:
			return 1
		}
		return 0
	})
	return ok[(len(ok)-1)/2]
}

func fmtShare(r *uplinkRun) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", r.Summary.Share)
}

// targetLabel names a target in table headings.
func targetLabel(t string) string {
	switch t {
	case "janus":
		return "Janus"
	case referenceTarget:
		return "Chromium→Chromium"
	}
	return t
}

func fmtQueue(r *uplinkRun) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f / %.0f", r.Summary.QueueP50, r.Summary.QueueP95)
}

func fmtRTT(r *uplinkRun) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f / %.0f", r.Summary.RTTP50, r.Summary.RTTP95)
}

func shareDiff(a, b *uplinkRun) string {
	if a == nil || b == nil {
		return "–"
	}
	return fmt.Sprintf("%+.2f", a.Summary.Share-b.Summary.Share)
}

func writeUplinkCSV(path string, runs []*uplinkRun) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"target", "cap_kbps", "rep", "video_kbps", "share", "wire_share", "rtt_p50_ms", "rtt_p95_ms", "rtt_count",
		"pair_rtt_p50_ms", "pair_rtt_p95_ms", "queue_p50_ms", "queue_p95_ms", "drop_pct", "available_kbps", "target_kbps", "loss_pct", "rtx_pct", "nacks",
		"bandwidth_limited_pct", "cpu_limited_pct", "fps", "resolution", "load_max", "error"})
	for _, r := range runs {
		s := r.Summary
		f := func(v float64) string { return fmt.Sprintf("%.4g", v) }
		_ = w.Write([]string{r.Target, fmt.Sprint(r.CapKbps), fmt.Sprint(r.Rep), f(s.VideoKbps), f(s.Share), f(s.WireShare),
			f(s.RTTP50), f(s.RTTP95), fmt.Sprint(s.RTTCount), f(s.PairRTTP50), f(s.PairRTTP95), f(s.QueueP50), f(s.QueueP95), f(s.DropPct), f(s.AvailKbps), f(s.TargetKbps),
			f(s.LossPct), f(s.RtxPct), f(s.NACKs), f(s.BWLimitedPct), f(s.CPULimitedPct), f(s.FPS), s.Resolution, f(s.LoadMax), r.Err})
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

// writeUplinkPlots draws share and RTT p95 against the cap, one line per server (every call).
func writeUplinkPlots(c config, dir string, runs []*uplinkRun) error {
	var share, rtt []report.Line
	for _, t := range uplinkTargets(c) {
		ls := report.Line{Name: t, Color: targetColor(t)}
		lr := ls
		for _, r := range runs {
			if r.Target != t || r.Err != "" {
				continue
			}
			ls.X, ls.Y = append(ls.X, float64(r.CapKbps)), append(ls.Y, r.Summary.Share)
			lr.X, lr.Y = append(lr.X, float64(r.CapKbps)), append(lr.Y, r.Summary.RTTP95)
		}
		share, rtt = append(share, ls), append(rtt, lr)
	}
	return errors.Join(
		report.PlotLines(filepath.Join(dir, "compare-share"), "uplink: Chromium's video send rate / cap", "cap (kbit/s)", "share of the cap", share),
		report.PlotLines(filepath.Join(dir, "compare-rtt"), "uplink: RTT p95 (remote-inbound-rtp)", "cap (kbit/s)", "ms", rtt),
	)
}
