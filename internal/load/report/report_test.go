package report

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// synthetic is a 20 s run: 4 participants join in the first 4 s, then a hold during which the
// server burns 0.5 s of CPU a second and subscribers receive 12.5 MB/s (100 Mbit/s).
func synthetic() *Result {
	r := &Result{Plan: plan.Default(), Machine: DetectMachine()}
	r.Plan.Name = "synthetic"
	r.Server = Server{PID: 1, Sampled: true}
	r.Totals.PeerConnections = 4
	var cpu float64
	var recv uint64
	for i := 0; i <= 20; i++ {
		s := Sample{T: float64(i), Publishers: min(i, 1), Subscribers: min(max(i-1, 0), 3), ServerOK: true,
			ServerRSSBytes: 100 << 20, ServerThreads: 10, GenCPUPct: 20, GenRSSBytes: 50 << 20}
		s.PeerConnections = s.Publishers + s.Subscribers
		if i >= 4 {
			cpu += 0.5
			recv += 12_500_000
			s.ServerRSSBytes = 104 << 20 // 4 MB more for 4 PeerConnections
			s.RecvMbps = 100
			s.SentMbps = 25
		}
		s.ServerCPUPct = 50
		s.ServerCPUSec = cpu
		s.RecvBytes = recv
		r.Samples = append(r.Samples, s)
	}
	r.Subscriptions = []Subscription{{Index: 0, Owner: -1, Expected: 2}, {Index: 1, Owner: -1, Expected: 2}}
	good := rtpstats.Summary{Kind: "video", Packets: 100, KbitPerSec: 1000, TTFFMs: 120, Live: true, Expected: 100}
	lossy := good
	lossy.Kind, lossy.LossRatio, lossy.Lost, lossy.Freezes = "audio", 0.02, 2, 1
	dead := good
	dead.Live, dead.TTFFMs = false, -1
	r.Streams = []Stream{
		{Subscription: 0, Owner: -1, Feed: 0, Mid: "0", Summary: good},
		{Subscription: 0, Owner: -1, Feed: 0, Mid: "1", Summary: lossy},
		{Subscription: 1, Owner: -1, Feed: 0, Mid: "0", Summary: good},
		{Subscription: 1, Owner: -1, Feed: 0, Mid: "1", Summary: dead},
	}
	r.Generator.CPUSeconds = 4
	r.Publishers = []Publisher{{Index: 0, Packets: 1000, Bytes: 1 << 20}}
	return r
}

func TestFinalizeDerivesPerGigabitAndQuality(t *testing.T) {
	r := synthetic()
	r.Finalize(5)
	tot := r.Totals
	// Steady window 5..20 s: 15 s, 7.5 CPU-s, 15 × 100 Mbit = 1.5 Gbit → 5 s/Gbit.
	if tot.SteadySeconds != 15 || math.Abs(r.Server.SteadyCPUSeconds-7.5) > 1e-9 || math.Abs(tot.CPUSecondsPerGbit-5) > 1e-9 {
		t.Errorf("steady %v s, cpu %v s, %v s/Gbit; want 15, 7.5, 5", tot.SteadySeconds, r.Server.SteadyCPUSeconds, tot.CPUSecondsPerGbit)
	}
	if math.Abs(tot.ForwardedMbps-100) > 1e-9 {
		t.Errorf("forwarded %v Mbit/s, want 100", tot.ForwardedMbps)
	}
	if r.Server.BaselineRSSBytes != 100<<20 || r.Server.PeakRSSBytes != 104<<20 || tot.RSSPerPCBytes != 1<<20 {
		t.Errorf("rss baseline %d peak %d per PC %v", r.Server.BaselineRSSBytes, r.Server.PeakRSSBytes, tot.RSSPerPCBytes)
	}
	if tot.StreamsExpected != 4 || tot.StreamsReceiving != 3 || tot.CompleteSubscribers != 1 || tot.CompleteShare != 0.5 {
		t.Errorf("quality: %+v", tot)
	}
	if math.Abs(tot.MeanLossRatio-0.005) > 1e-9 || tot.MaxLossRatio != 0.02 || tot.Freezes != 1 || tot.MeanTTFFMs != 120 {
		t.Errorf("loss %v max %v freezes %d ttff %v", tot.MeanLossRatio, tot.MaxLossRatio, tot.Freezes, tot.MeanTTFFMs)
	}
	if math.Abs(tot.GeneratorCPUPerServer-4/8.5) > 1e-9 {
		t.Errorf("generator/server CPU %v", tot.GeneratorCPUPerServer)
	}
}

func TestFinalizeWithoutASteadyWindow(t *testing.T) {
	r := synthetic()
	r.Finalize(100) // interrupted before the hold began
	if r.Totals.CPUSecondsPerGbit != 0 || r.Totals.SteadySeconds != 0 || r.Server.CPUSeconds != 8.5 {
		t.Errorf("no steady window: %+v, server %+v", r.Totals, r.Server)
	}
}

func TestWriteProducesEveryOutput(t *testing.T) {
	r := synthetic()
	r.Errors = []string{"subscriber 3: no answer"}
	r.Finalize(5)
	dir := t.TempDir()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{SummaryFile, TimeseriesFile, StreamsFile, ReportFile, "cpu.png", "cpu.svg", "memory.png", "memory.svg", "bandwidth.png", "bandwidth.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	back, err := ReadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if back.Totals != r.Totals || len(back.Streams) != 4 || back.Streams[1].LossRatio != 0.02 || back.Plan.Name != "synthetic" {
		t.Errorf("summary round trip: %+v", back.Totals)
	}
	rows := readCSV(t, filepath.Join(dir, TimeseriesFile))
	if len(rows) != 22 || len(rows[0]) != len(timeseriesHeader) || rows[21][4] != "4" || rows[21][17] != "100.000" {
		t.Errorf("timeseries: %d rows, last %v", len(rows), rows[len(rows)-1])
	}
	if rows := readCSV(t, filepath.Join(dir, StreamsFile)); len(rows) != 5 || rows[2][10] != "0.0200" {
		t.Errorf("streams: %v", rows)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	for _, want := range []string{"5.000 s/Gbit", "1 of 2 (50.0%)", "subscriber 3: no answer", "cpu.svg", "| 0 | 1000 | 1.0 | 0 | 1/1 | 2/3 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	png, _ := os.ReadFile(filepath.Join(dir, "cpu.png"))
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Error("cpu.png is not a PNG")
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestAudioBridgeRunReport writes a stepped audio bridge run: the timing of the mixes, what the
// listeners heard and the steps reach summary.json, steps.csv and report.md.
func TestAudioBridgeRunReport(t *testing.T) {
	r := synthetic()
	r.Plan = plan.DefaultAudioBridge()
	r.Plan.Name, r.Plan.AudioBridge.Participants, r.Plan.Steps.Size = "ab", 20, 10
	var c rtpstats.TimingCounts
	for i := 0; i < 999; i++ {
		c.Interarrival.Add(20 * time.Millisecond)
		c.Lateness.Add(3 * time.Millisecond)
	}
	c.Lateness.Add(45 * time.Millisecond)
	c.Frames, c.Late, c.Gaps = 1000, 1, 1
	r.Totals.Audio = TimingOf(&c)
	if a := r.Totals.Audio; a.LateShare != 0.001 || a.InterarrivalP50 != 21 || a.LatenessP99 != 4 || a.LatenessMax != 46 {
		t.Fatalf("timing %+v", a)
	}
	r.Totals.Listening = Listening{Listeners: 2, Decoded: 900, SpeechFrames: 800, SpeechMeanDBov: -27.5, SpeechAudible: 0.85,
		SilenceFrames: 50, SilenceDBov: -76}
	r.Steps = []Step{
		{Participants: 10, PeerConnections: 10, ServerOK: true, ServerCPUPct: 12, ServerRSSBytes: 40 << 20, Audio: r.Totals.Audio},
		{Participants: 20, PeerConnections: 20, ServerOK: true, ServerCPUPct: 30, ServerRSSBytes: 50 << 20, LossRatio: 0.02, Behind: true},
	}
	r.StoppedBehind = 2
	if r.Steps[1].CPUPerParticipant() != 1.5 || (Step{}).CPUPerParticipant() != 0 {
		t.Fatal("CPU per participant")
	}
	dir := t.TempDir()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Steps) != 2 || back.StoppedBehind != 2 || back.Totals.Listening != r.Totals.Listening || back.Totals.Audio != r.Totals.Audio {
		t.Fatalf("summary: steps %+v, stopped %d", back.Steps, back.StoppedBehind)
	}
	rows := readCSV(t, filepath.Join(dir, StepsFile))
	if len(rows) != 3 || len(rows[0]) != len(stepsHeader) || rows[1][5] != "1.200" || rows[2][26] != "true" {
		t.Fatalf("steps.csv: %v", rows)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	for _, want := range []string{"audio bridge room 1234; 20 participants", "| late frames (> 20 ms) | 1 (0.100%) |", "-27.5 dBov",
		"| 20 | 30.0 | 1.500 | 0.000 | 50.0 |", "stopped after step 2"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestNodesOverTheSteadyWindow gives the synthetic run two nodes: the first burns 0.3 s of CPU a
// second, the second 0.2 s (their sum is the server's 0.5); the second misses the reading at 10 s.
func TestNodesOverTheSteadyWindow(t *testing.T) {
	r := synthetic()
	r.Nodes = []Node{{Server: "a", Sampled: true}, {Server: "b", Sampled: true}}
	for i := range r.Samples {
		s := &r.Samples[i]
		busy := float64(max(i-3, 0))
		s.Nodes = []NodeSample{
			{OK: true, CPUSec: 0.3 * busy, RSSBytes: 60 << 20, NetOutBytes: uint64(i) * 1000},
			{OK: i != 10, CPUSec: 0.2 * busy, RSSBytes: (40 << 20) + int64(i)<<20},
		}
	}
	r.Finalize(10)
	a, b := r.Nodes[0], r.Nodes[1]
	// b missed the window's first reading; its window starts at its next one.
	if math.Abs(a.SteadyCPUSeconds-3) > 1e-9 || math.Abs(a.SteadyCPUPct-30) > 1e-9 || math.Abs(b.SteadyCPUSeconds-1.8) > 1e-9 || math.Abs(b.SteadyCPUPct-20) > 1e-9 {
		t.Errorf("steady CPU: a %.2f s (%.1f %%), b %.1f %%", a.SteadyCPUSeconds, a.SteadyCPUPct, b.SteadyCPUPct)
	}
	if a.CPUSeconds != 0.3*17 || a.NetOutBytes != 20_000 || a.BaselineRSSBytes != 60<<20 || a.PeakRSSBytes != 60<<20 {
		t.Errorf("node a: %+v", a)
	}
	// b's samples at 11…20 s (the one at 10 s is missing): mean RSS 40 MB + 15.5 MB.
	if b.PeakRSSBytes != 60<<20 || b.SteadyRSSBytes != (40<<20)+(31<<20)/2 || b.BaselineRSSBytes != 40<<20 {
		t.Errorf("node b: %+v", b)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, r); err != nil || !strings.Contains(md.String(), "| a | 0 | 2 | 5.10 (3.00) | 30.0 | 60.0 / 60.0 / 60.0 | 0.0 / 0.0 |") {
		t.Errorf("nodes table (%v):\n%s", err, md.String())
	}
}
