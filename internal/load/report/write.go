package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/load/plan"
)

// Files written into the output directory.
const (
	SummaryFile    = "summary.json"
	TimeseriesFile = "timeseries.csv"
	StreamsFile    = "streams.csv"
	ReportFile     = "report.md"
)

// Write writes every output of r into dir (created if needed). It writes as much as it can and
// returns the errors of what it could not.
func Write(dir string, r *Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return errors.Join(
		writeFile(filepath.Join(dir, SummaryFile), func(w io.Writer) error { return WriteSummary(w, r) }),
		writeFile(filepath.Join(dir, TimeseriesFile), func(w io.Writer) error { return WriteTimeseries(w, r.Samples) }),
		writeFile(filepath.Join(dir, StreamsFile), func(w io.Writer) error { return WriteStreams(w, r.Streams) }),
		WritePlots(dir, r),
		writeStepsFile(dir, r),
		writeFile(filepath.Join(dir, ReportFile), func(w io.Writer) error { return WriteMarkdown(w, r) }),
	)
}

func writeStepsFile(dir string, r *Result) error {
	if len(r.Steps) == 0 {
		return nil
	}
	return writeFile(filepath.Join(dir, StepsFile), func(w io.Writer) error { return WriteSteps(w, r.Steps) })
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// WriteSummary writes summary.json.
func WriteSummary(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadSummary reads a summary.json back (the benchmarks compare runs from their summaries).
func ReadSummary(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Result{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

var timeseriesHeader = []string{"t_s", "publishers", "subscribers", "audiobridge", "participants", "peer_connections",
	"server_cpu_pct", "server_cpu_s", "server_rss_mb", "server_threads",
	"server_net_in_mbps", "server_net_out_mbps", "server_net_in_pps", "server_net_out_pps",
	"generator_cpu_pct", "generator_rss_mb", "sent_mbps", "received_mbps", "loss_pct", "late_frames", "generator_cpu_s"}

// WriteTimeseries writes one row a second. Server columns are empty when the server could not be
// sampled, network columns when its traffic could not be isolated.
func WriteTimeseries(w io.Writer, samples []Sample) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(timeseriesHeader); err != nil {
		return err
	}
	for _, s := range samples {
		server := []string{"", "", "", ""}
		if s.ServerOK {
			server = []string{f1(s.ServerCPUPct), f3(s.ServerCPUSec), f1(mb(s.ServerRSSBytes)), strconv.Itoa(s.ServerThreads)}
		}
		net := []string{f3(s.NetInMbps), f3(s.NetOutMbps), f1(s.NetInPps), f1(s.NetOutPps)}
		row := append([]string{f1(s.T), strconv.Itoa(s.Publishers), strconv.Itoa(s.Subscribers), strconv.Itoa(s.AudioBridge),
			strconv.Itoa(s.Participants()), strconv.Itoa(s.PeerConnections)}, server...)
		row = append(row, net...)
		row = append(row, f1(s.GenCPUPct), f1(mb(s.GenRSSBytes)), f3(s.SentMbps), f3(s.RecvMbps), f3(s.LossPct), u(s.LateFrames), f3(s.GenCPUSec))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteStreams writes one row per received stream.
func WriteStreams(w io.Writer, streams []Stream) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"subscription", "owner", "feed", "mid", "kind", "packets", "bytes", "kbit_per_s",
		"expected", "lost", "loss_ratio", "jitter_ms", "frames", "keyframes", "fps", "freezes", "freeze_ms",
		"max_gap_ms", "ttff_ms", "live"})
	for _, s := range streams {
		_ = cw.Write([]string{strconv.Itoa(s.Subscription), strconv.Itoa(s.Owner), strconv.Itoa(s.Feed), s.Mid, s.Kind,
			u(s.Packets), u(s.Bytes), f1(s.KbitPerSec), u(s.Expected), u(s.Lost), f4(s.LossRatio), f3(s.JitterMs),
			u(s.Frames), u(s.Keyframes), f1(s.FPS), u(s.Freezes), f1(s.FreezeMs), f1(s.MaxGapMs), f1(s.TTFFMs),
			strconv.FormatBool(s.Live)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteMarkdown writes report.md: the plan, the headline figures, quality, and the plots.
func WriteMarkdown(w io.Writer, r *Result) error {
	var b strings.Builder
	p, t, s, g := r.Plan, r.Totals, r.Server, r.Generator
	fmt.Fprintf(&b, "# Load run %q\n\n", p.Name)
	switch {
	case p.IsAudioBridge():
		fmt.Fprintf(&b, "Server `%s`, audio bridge room %d; %d participants (voice, at most %d talking at once, %d decoding the mix); ",
			p.Server, p.Room, p.AudioBridge.Participants, p.Talkers, min(p.AudioBridge.Decode, p.AudioBridge.Participants))
	case p.IsSIP():
		fmt.Fprintf(&b, "Server `%s`, SIP plugin; %d callers each calling `%s` (Opus, %d decoding the echo); ",
			p.Server, p.SIP.Calls, p.SIP.URI, min(p.SIP.Decode, p.SIP.Calls))
	default:
		fmt.Fprintf(&b, "Server `%s`, room %d; %d publishers (%s media), %d subscribers, publishers subscribe to each other: %v; ",
			p.Home(), p.Room, p.Publishers, p.Media, p.Subscribers, p.PublishersSubscribe)
	}
	if len(p.Servers) > 1 {
		fmt.Fprintf(&b, "spread over %d servers (publishers on the first, subscribers round-robin): %s; ", len(p.Servers), strings.Join(p.Servers, ", "))
	}
	if p.Steps.Size > 0 {
		fmt.Fprintf(&b, "joining in steps of %d, each held %v (measured after %v); ", p.Steps.Size, p.Steps.Hold, p.Steps.Settle)
	}
	fmt.Fprintf(&b, "join rate %.3g/s, held %v after the last join.\n\n", p.JoinRate, p.Duration)
	fmt.Fprintf(&b, "Machine: %s, %d cores, kernel %s, load average %.2f at the end. Started %s, ran %.1f s.", r.Machine.CPU, r.Machine.Cores,
		r.Machine.Kernel, r.Machine.LoadAvg, r.Started.Format("2006-01-02 15:04:05 MST"), r.Seconds)
	if r.Interrupted {
		b.WriteString(" **Interrupted**: the figures cover the run up to the interruption.")
	}
	b.WriteString("\n\n## Result\n\n| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	row("joined", fmt.Sprintf("%d publishers, %d subscribers, %d audio bridge participants, %d PeerConnections (%d failed joins)",
		t.Publishers, t.Subscribers, t.AudioBridge, t.PeerConnections, t.FailedJoins))
	if s.Sampled {
		who := fmt.Sprintf("PID %d", s.PID)
		if len(r.Nodes) > 0 {
			who = fmt.Sprintf("the sum of %d servers (Nodes below)", len(r.Nodes))
		}
		if s.InProcess {
			who += " (in the generator's process: CPU and memory include the generator)"
		}
		row("server", who)
		row("server CPU", fmt.Sprintf("%.2f s total, %.2f s in the %.1f s steady window", s.CPUSeconds, s.SteadyCPUSeconds, t.SteadySeconds))
		row("server RSS", fmt.Sprintf("baseline %.1f MB, steady %.1f MB, peak %.1f MB, %d threads at peak", mb(s.BaselineRSSBytes), mb(s.SteadyRSSBytes), mb(s.PeakRSSBytes), s.PeakThreads))
		row("CPU per forwarded gigabit", fmt.Sprintf("%.3f s/Gbit (%.2f Mbit/s of RTP received in the steady window)", t.CPUSecondsPerGbit, t.ForwardedMbps))
		row("RSS per PeerConnection", fmt.Sprintf("%.1f kB", t.RSSPerPCBytes/1024))
	} else {
		row("server", "not sampled (pass --server-pid)")
	}
	if s.NetIsolated {
		row("server traffic", fmt.Sprintf("in %.1f MB (%d packets), out %.1f MB (%d packets)", mb(int64(s.NetInBytes)), s.NetInPackets, mb(int64(s.NetOutBytes)), s.NetOutPackets))
	}
	row("generator CPU", fmt.Sprintf("%.2f s (%.2f× the server's); peak RSS %.1f MB; %d late skips, %d send errors", g.CPUSeconds, t.GeneratorCPUPerServer, mb(g.PeakRSSBytes), g.LateSkips, g.SendErrors))
	row("generator CPU per forwarded gigabit", fmt.Sprintf("%.3f s/Gbit in the steady window (%.2f× the server's), %s receivers", t.GeneratorCPUSecondsPerGbit, t.GeneratorPerGbitShare, g.Receiver))
	if g.Receiver == plan.ReceiverLight {
		perRead := 0.0
		if g.SocketReads > 0 {
			perRead = float64(g.SocketDatagrams) / float64(g.SocketReads)
		}
		row("light receivers", fmt.Sprintf("%d packets counted at the socket, %d sampled through Pion (%d verified, %d bad payloads), %d NACKed; %.2f datagrams per recvmmsg",
			g.Swallowed, g.Sampled, g.Verified, g.BadSamples, g.NACKs, perRead))
	}
	row("sent / received RTP", fmt.Sprintf("%.1f MB / %.1f MB", mb(int64(t.SentBytes)), mb(int64(t.ReceivedBytes))))
	b.WriteString("\n## Received quality\n\n| | |\n|---|---|\n")
	row("streams receiving at the end", fmt.Sprintf("%d of %d expected", t.StreamsReceiving, t.StreamsExpected))
	row("subscriptions receiving every stream", fmt.Sprintf("%d of %d (%.1f%%)", t.CompleteSubscribers, t.Subscriptions, 100*t.CompleteShare))
	row("loss", fmt.Sprintf("mean %.3f%%, worst stream %.3f%%", 100*t.MeanLossRatio, 100*t.MaxLossRatio))
	row("freezes (> 500 ms)", fmt.Sprintf("%d", t.Freezes))
	row("mean time to first frame", fmt.Sprintf("%.0f ms", t.MeanTTFFMs))
	row("mean stream bitrate", fmt.Sprintf("video %.0f kbit/s, audio %.0f kbit/s", t.MeanVideoKbps, t.MeanAudioKbps))
	writeAudio(&b, r)
	writeSIP(&b, r)
	writePublishers(&b, r)
	writeNodes(&b, r)
	if len(r.Errors) > 0 {
		b.WriteString("\n## Errors\n\n")
		for i, e := range r.Errors {
			if i == 20 {
				fmt.Fprintf(&b, "- … and %d more (summary.json has them all)\n", len(r.Errors)-20)
				break
			}
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	b.WriteString("\n## Plots\n\n![CPU](cpu.svg)\n\n![Memory](memory.svg)\n\n![Bandwidth](bandwidth.svg)\n\n")
	b.WriteString("Per-second samples are in `timeseries.csv`, per-stream figures in `streams.csv`, everything in `summary.json`.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writePublishers shows, per publisher, what it sent and how many subscriptions were still
// receiving each of its streams at the end: a server that stops forwarding one feed shows here.
func writePublishers(b *strings.Builder, r *Result) {
	if len(r.Publishers) == 0 {
		return
	}
	type count struct{ live, all int }
	per := map[int]map[string]*count{}
	for _, st := range r.Streams {
		if per[st.Feed] == nil {
			per[st.Feed] = map[string]*count{}
		}
		c := per[st.Feed][st.Kind]
		if c == nil {
			c = &count{}
			per[st.Feed][st.Kind] = c
		}
		c.all++
		if st.Live {
			c.live++
		}
	}
	b.WriteString("\n## Publishers\n\n| publisher | sent packets | sent MB | late skips | audio live in | video live in |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range r.Publishers {
		cell := func(kind string) string {
			if c := per[p.Index][kind]; c != nil {
				return fmt.Sprintf("%d/%d", c.live, c.all)
			}
			return "–"
		}
		fmt.Fprintf(b, "| %d | %d | %.1f | %d | %s | %s |\n", p.Index, p.Packets, mb(int64(p.Bytes)), p.LateSkips, cell("audio"), cell("video"))
	}
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
func f4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
func u(v uint64) string   { return strconv.FormatUint(v, 10) }
func mb(b int64) float64  { return float64(b) / (1 << 20) }
