// Package load is `strata load`, a load generator for Janus-API media servers (strata, or Janus
// itself): synthetic WebRTC publishers send real VP8 simulcast and Opus at real-time pace into a
// videoroom, subscribers receive and measure every stream without decoding; or audio bridge
// participants send speech in a call's talk pattern and measure (and some decode) the mix they
// get back; or viewers watch a streaming mountpoint that the generator feeds plain RTP; or SIP
// callers call an echo service through the SIP plugin and check that they hear themselves. A
// sampler records the server process's CPU, memory, threads and traffic every second; a stepped
// run also measures every step. A run writes CSV, summary.json, plots and report.md. The plan
// comes from flags or a YAML file (package plan); the clients, media, voices, metrics, sampler and
// report live in the subpackages.
package load

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
)

// Exit statuses of Main.
const (
	ExitOK          = 0
	ExitFailed      = 1 // set-up failed, or clients failed to join or received nothing
	ExitUsage       = 2
	ExitInterrupted = 130
)

const usage = `usage: strata load [flags]

Drives a Janus-API server's videoroom (or a cluster's: --servers spreads the subscribers over its
nodes, the publishers on the first) with synthetic WebRTC publishers and subscribers, its
audio bridge with participants who talk in turns, its streaming plugin with viewers of an rtp
mountpoint the generator feeds plain RTP, or its SIP plugin with callers of an echo service on the
SIP side (each checks the audio coming back is its own), and measures the server (CPU, memory, threads,
traffic) and what the clients receive (bitrate, loss, jitter, frames, freezes, time to first
frame; for audio, late frames and inter-arrival times, and whether the mix carries speech).

  strata load --server http://127.0.0.1:8088/janus --create-room --publishers 1 --subscribers 3 --duration 10s --out load-out
  strata load --server http://127.0.0.1:8088/janus --room 1234 --audiobridge 20 --step 5 --step-hold 10s --out load-out
  strata load --server http://127.0.0.1:8088/janus --create-room --room 4001 --streaming 16 --duration 20s --out load-out
  strata load --server http://127.0.0.1:8088/janus --sip 10 --sip-uri sip:echo@10.0.0.1:5060 --out load-out
  strata load --servers http://10.0.0.11:8088/janus,http://10.0.0.12:8088/janus --server-pids 411,412 --create-room --subscribers 32 --out load-out
  strata load --plan plan.yaml --out load-out

Outputs in --out: summary.json, timeseries.csv, streams.csv, cpu/memory/bandwidth .png and .svg,
report.md. An interrupted run (Ctrl-C) still writes them.

flags:
`

// Main runs `strata load`. args are the words after "load".
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	planFlags := plan.RegisterFlags(fs)
	out := fs.String("out", "load-out", "directory for the results")
	mediaDir := fs.String("media-dir", mediasrc.DefaultDir(), "cache of the generated test media")
	pid := fs.Int("server-pid", 0, "PID of the server to sample (default: the process listening on the server's port)")
	pids := fs.String("server-pids", "", "comma-separated PIDs of the --servers, in their order, to sample each (a cluster's nodes)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	cpuProfile := fs.String("cpuprofile", "", "write the generator's own CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "strata load: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	p, err := planFlags.Build()
	if err != nil {
		fmt.Fprintf(stderr, "strata load: %v\n", err)
		return ExitUsage
	}
	if *cpuProfile != "" {
		stopProfile, err := startProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "strata load: %v\n", err)
			return ExitFailed
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := Options{MediaDir: *mediaDir, ServerPID: *pid}
	if *pids != "" {
		if opts.ServerPIDs, err = parsePIDs(*pids); err != nil {
			fmt.Fprintf(stderr, "strata load: --server-pids: %v\n", err)
			return ExitUsage
		}
	}
	if !*quiet {
		opts.Progress, opts.Terminal = stderr, isTerminal(stderr)
	}
	res, err := Run(ctx, p, opts)
	if err != nil {
		fmt.Fprintf(stderr, "strata load: %v\n", err)
		return ExitFailed
	}
	if err := report.Write(*out, res); err != nil {
		fmt.Fprintf(stderr, "strata load: writing results: %v\n", err)
		return ExitFailed
	}
	printSummary(stdout, *out, res)
	switch {
	case res.Interrupted:
		return ExitInterrupted
	case !healthy(res):
		return ExitFailed
	}
	return ExitOK
}

// healthy reports whether every client joined and, when there were subscriptions, media arrived.
func healthy(r *report.Result) bool {
	if r.Totals.FailedJoins > 0 {
		return false
	}
	if r.Plan.IsSIP() && r.SIPCheck() != nil {
		return false
	}
	return len(r.Subscriptions) == 0 || r.Totals.StreamsReceiving > 0
}

func printSummary(w io.Writer, dir string, r *report.Result) {
	t, s := r.Totals, r.Server
	fmt.Fprintf(w, "%s: %d publishers, %d subscribers, %d audio bridge participants, %d PeerConnections (%d failed joins)\n",
		r.Plan.Name, t.Publishers, t.Subscribers, t.AudioBridge, t.PeerConnections, t.FailedJoins)
	if s.Sampled {
		fmt.Fprintf(w, "server: %.2f CPU-s, peak RSS %.1f MB, %.3f CPU-s per forwarded Gbit, %.1f kB RSS per PeerConnection\n",
			s.CPUSeconds, float64(s.PeakRSSBytes)/(1<<20), t.CPUSecondsPerGbit, t.RSSPerPCBytes/1024)
	}
	fmt.Fprintf(w, "received: %d/%d streams live, %d/%d subscriptions complete, mean loss %.3f%%, %d freezes; generator %.2f CPU-s\n",
		t.StreamsReceiving, t.StreamsExpected, t.CompleteSubscribers, t.Subscriptions, 100*t.MeanLossRatio, t.Freezes, r.Generator.CPUSeconds)
	if a := t.Audio; a.Frames > 0 {
		fmt.Fprintf(w, "audio: %d frames, %d late by more than 20 ms, inter-arrival p50/p99 %.0f/%.0f ms, lateness p99/max %.0f/%.0f ms\n",
			a.Frames, a.LateFrames, a.InterarrivalP50, a.InterarrivalP99, a.LatenessP99, a.LatenessMax)
	}
	if l := t.Listening; l.Listeners > 0 {
		fmt.Fprintf(w, "mix: %.1f dBov while others talked, %.1f dBov while nobody did (%d listeners)\n", l.SpeechMeanDBov, l.SilenceDBov, l.Listeners)
	}
	if s := t.SIP; r.Plan.IsSIP() {
		fmt.Fprintf(w, "sip: %d calls, set-up mean %.0f ms, %.2f %% of the audio came back (round trip mean %.1f ms)\n", s.Calls, s.SetupMeanMs, 100*s.EchoShare, s.RTTMeanMs)
		if err := r.SIPCheck(); err != nil {
			fmt.Fprintf(w, "sip: broken: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	if r.StoppedBehind > 0 {
		fmt.Fprintf(w, "stopped after step %d of %d: the server fell behind real time\n", r.StoppedBehind, r.Plan.StepCount())
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
	fmt.Fprintf(w, "results in %s\n", dir)
}

// startProfile profiles the generator (to check it stays cheaper than the server it loads).
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// isTerminal reports whether w is a character device (a terminal), where the bar is redrawn.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// parsePIDs reads "123,456" (spaces allowed).
func parsePIDs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a process id", f)
		}
		out = append(out, n)
	}
	return out, nil
}
