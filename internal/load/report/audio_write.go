package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// StepsFile is the steps' table, written for a stepped run.
const StepsFile = "steps.csv"

var stepsHeader = []string{"participants", "peer_connections", "from_s", "to_s", "server_cpu_pct", "server_cpu_pct_per_participant",
	"mixer_cpu_pct", "mixer_cpu_per_participant", "server_rss_mb", "server_net_in_mbps", "server_net_out_mbps", "sent_mbps", "received_mbps", "generator_cpu_pct",
	"expected", "lost", "loss_ratio", "frames", "late_frames", "late_share", "gaps", "interarrival_p50_ms", "interarrival_p99_ms",
	"lateness_p99_ms", "lateness_max_ms", "load_avg", "behind"}

// WriteSteps writes one row per step.
func WriteSteps(w io.Writer, steps []Step) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(stepsHeader); err != nil {
		return err
	}
	for _, s := range steps {
		a := s.Audio
		row := []string{strconv.Itoa(s.Participants), strconv.Itoa(s.PeerConnections), f1(s.From), f1(s.To),
			f1(s.ServerCPUPct), f3(s.CPUPerParticipant()), f1(s.MixerCPUPct), f3(s.MixerCPUPerParticipant()), f1(mb(s.ServerRSSBytes)), f3(s.NetInMbps), f3(s.NetOutMbps),
			f3(s.SentMbps), f3(s.RecvMbps), f1(s.GenCPUPct), u(s.Expected), u(s.Lost), f4(s.LossRatio),
			u(a.Frames), u(a.LateFrames), f4(a.LateShare), u(a.Gaps), f1(a.InterarrivalP50), f1(a.InterarrivalP99),
			f1(a.LatenessP99), f1(a.LatenessMax), f1(s.LoadAvg), strconv.FormatBool(s.Behind)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeAudio adds the received audio's timing, what the listeners heard, and the steps.
func writeAudio(b *strings.Builder, r *Result) {
	a, l := r.Totals.Audio, r.Totals.Listening
	row := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, v) }
	if a.Frames > 0 {
		b.WriteString("\n## Received audio timing\n\nEvery received audio stream (a participant's mix, or each stream an SFU participant hears); " +
			"a frame is late when it arrives more than 20 ms after its timestamp says it was due (against the shortest transit of the last 1–2 s).\n\n| | |\n|---|---|\n")
		row("frames", u(a.Frames))
		row("late frames (> 20 ms)", fmt.Sprintf("%d (%.3f%%)", a.LateFrames, 100*a.LateShare))
		row("gaps (inter-arrival > 40 ms)", u(a.Gaps))
		row("inter-arrival p50 / p99", fmt.Sprintf("%.0f / %.0f ms", a.InterarrivalP50, a.InterarrivalP99))
		row("lateness p99 / max", fmt.Sprintf("%.0f / %.0f ms", a.LatenessP99, a.LatenessMax))
	}
	if l.Listeners > 0 {
		fmt.Fprintf(b, "\n## What the mix carried\n\n%d participants decoded their mix (%d frames, %d errors).\n\n| while | frames | mean level | frames above %d dBov |\n|---|---:|---:|---:|\n",
			l.Listeners, l.Decoded, l.DecodeErrors, audibleDBov)
		fmt.Fprintf(b, "| someone else talked (≥ 300 ms) | %d | %.1f dBov | %.1f%% |\n", l.SpeechFrames, l.SpeechMeanDBov, 100*l.SpeechAudible)
		fmt.Fprintf(b, "| nobody else talked (≥ 500 ms) | %d | %.1f dBov | %.1f%% |\n", l.SilenceFrames, l.SilenceDBov, 100*l.SilenceAudible)
	}
	if len(r.Steps) == 0 {
		return
	}
	b.WriteString("\n## Steps\n\nEach step measured over its window (after its joins and a settling time); CPU in % of one core.\n\n")
	b.WriteString("| participants | server CPU % | CPU %/participant | mixing CPU %/participant | RSS MB | in / out Mbit/s | loss % | late frames | lateness p99 / max ms | inter-arrival p99 ms | generator CPU % | load avg | behind |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---|\n")
	for _, s := range r.Steps {
		fmt.Fprintf(b, "| %d | %.1f | %.3f | %.3f | %.1f | %.2f / %.2f | %.3f | %d | %.0f / %.0f | %.0f | %.0f | %.1f | %v |\n", s.Participants, s.ServerCPUPct,
			s.CPUPerParticipant(), s.MixerCPUPerParticipant(), mb(s.ServerRSSBytes), s.NetInMbps, s.NetOutMbps, 100*s.LossRatio, s.Audio.LateFrames,
			s.Audio.LatenessP99, s.Audio.LatenessMax, s.Audio.InterarrivalP99, s.GenCPUPct, s.LoadAvg, s.Behind)
	}
	if r.StoppedBehind > 0 {
		fmt.Fprintf(b, "\nThe run stopped after step %d: the server fell behind real time (late frames or loss above the plan's thresholds).\n", r.StoppedBehind)
	}
}

// audibleDBov mirrors client.AudibleDBov (the report does not import the clients).
const audibleDBov = -40
