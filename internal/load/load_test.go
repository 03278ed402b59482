package load

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/load/loadtest"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/load/sipecho"
)

// smoke runs a plan against an in-process strata and checks media flowed to every subscription
// and the report was written. It asserts no timings.
func smoke(t *testing.T, p plan.Plan) *report.Result {
	t.Helper()
	p.Duration = 3 * time.Second
	p.Warmup = time.Second
	p.JoinRate = 20
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, p, Options{ServerPID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := report.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadSummary(filepath.Join(dir, report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	tot := back.Totals
	t.Logf("%s: %d PCs, %d/%d streams live, %d/%d complete, loss %.4f, %d freezes, ttff %.0f ms, server cpu %.2f s, generator %.2f s, errors %v",
		p.Name, tot.PeerConnections, tot.StreamsReceiving, tot.StreamsExpected, tot.CompleteSubscribers, tot.Subscriptions,
		tot.MeanLossRatio, tot.Freezes, tot.MeanTTFFMs, back.Server.CPUSeconds, back.Generator.CPUSeconds, back.Errors)
	if tot.FailedJoins != 0 || len(back.Errors) != 0 {
		t.Errorf("failed joins %d, errors %v", tot.FailedJoins, back.Errors)
	}
	if tot.PeerConnections != p.PeerConnections() {
		t.Errorf("%d PeerConnections, plan says %d", tot.PeerConnections, p.PeerConnections())
	}
	// Every subscription must have received a decodable frame on every stream it expected. (Whether
	// frames were still arriving at the very end is a quality figure, left to the benchmarks: a
	// busy test machine can stall a stream for a moment.)
	got := map[int]int{}
	for _, st := range back.Streams {
		if st.Packets > 0 && st.TTFFMs >= 0 {
			got[st.Subscription]++
		}
	}
	if len(back.Subscriptions) == 0 || tot.StreamsExpected == 0 {
		t.Errorf("no subscriptions or no expected streams: %+v", tot)
	}
	for _, s := range back.Subscriptions {
		if got[s.Index] != s.Expected {
			t.Errorf("subscription %d (owner %d): media on %d of %d streams", s.Index, s.Owner, got[s.Index], s.Expected)
		}
	}
	if tot.SentBytes == 0 || tot.ReceivedBytes == 0 || !back.Server.Sampled || back.Server.CPUSeconds <= 0 || back.Generator.CPUSeconds <= 0 {
		t.Errorf("nothing measured: totals %+v server %+v", tot, back.Server)
	}
	for _, f := range []string{report.TimeseriesFile, report.StreamsFile, report.ReportFile, "cpu.png", "bandwidth.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	return back
}

func TestSmokeFanOut(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	res := smoke(t, plan.FanOut(httpURL, 3))
	for _, st := range res.Streams {
		if st.Kind == "video" && st.Keyframes == 0 {
			t.Errorf("subscription %d: video without a keyframe", st.Subscription)
		}
	}
}

// TestSmokeStreaming creates an rtp mountpoint on strata's streaming plugin, feeds it plain RTP
// and has three viewers watch it: each receives the Opus and the VP8 stream, from a keyframe.
func TestSmokeStreaming(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	res := smoke(t, plan.StreamingFanOut(httpURL, 3))
	if res.Totals.Subscribers != 3 || res.Totals.StreamsExpected != 6 || len(res.Publishers) != 1 || res.Publishers[0].Packets == 0 {
		t.Errorf("totals %+v, feed %+v", res.Totals, res.Publishers)
	}
	for _, st := range res.Streams {
		if st.Kind == "video" && st.Keyframes == 0 {
			t.Errorf("viewer %d: video without a keyframe", st.Subscription)
		}
	}
}

func TestSmokeVideoroom(t *testing.T) {
	_, wsURL := loadtest.StartStrata(t)
	p := plan.Videoroom(wsURL, 3, 2)
	res := smoke(t, p)
	if res.Totals.Subscriptions != 3+2 {
		t.Errorf("%d subscriptions, want one per publisher and one per subscriber", res.Totals.Subscriptions)
	}
}

// TestSmokeServers spreads a fan-out over two servers, which here are strata's HTTP and WebSocket
// endpoints of one in-process server (a cluster's nodes need root): the publisher on the first,
// subscribers alternating, every subscription marked with its server, each server sampled and
// reported as a node.
func TestSmokeServers(t *testing.T) {
	httpURL, wsURL := loadtest.StartStrata(t)
	p := plan.FanOut("", 3)
	p.Servers = []string{httpURL, wsURL}
	p.Duration, p.Warmup, p.JoinRate = 3*time.Second, time.Second, 20
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, p, Options{ServerPIDs: []int{os.Getpid(), os.Getpid()}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals.FailedJoins != 0 || len(res.Errors) != 0 {
		t.Fatalf("failed joins %d, errors %v", res.Totals.FailedJoins, res.Errors)
	}
	var servers []int
	for _, s := range res.Subscriptions {
		servers = append(servers, s.Server)
	}
	slices.Sort(servers)
	if !slices.Equal(servers, []int{0, 0, 1}) {
		t.Errorf("subscriptions' servers %v, want two on the first and one on the second", servers)
	}
	live := map[int]bool{}
	for _, st := range res.Streams {
		if st.Packets > 0 && st.TTFFMs >= 0 {
			live[st.Server] = true
		}
	}
	if !live[0] || !live[1] {
		t.Errorf("media arrived through servers %v, want both", live)
	}
	if len(res.Nodes) != 2 || !res.Nodes[0].Sampled || res.Nodes[1].CPUSeconds <= 0 || res.Nodes[1].Server != wsURL {
		t.Fatalf("nodes %+v", res.Nodes)
	}
	// Both nodes are this process, so the sum is twice one node.
	if got, one := res.Server.PeakRSSBytes, res.Nodes[0].PeakRSSBytes; got < one*3/2 {
		t.Errorf("total peak RSS %d, one node's %d: not summed", got, one)
	}
	var md strings.Builder
	if err := report.WriteMarkdown(&md, res); err != nil || !strings.Contains(md.String(), "## Nodes") {
		t.Errorf("report without the nodes (%v):\n%s", err, md.String())
	}
}

func TestSmokeAudioConference(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	res := smoke(t, plan.AudioConference(httpURL, 4))
	for _, st := range res.Streams {
		if st.Kind != "audio" {
			t.Fatalf("audio conference carried %s", st.Kind)
		}
	}
	if res.Totals.StreamsExpected != 4*3 {
		t.Errorf("%d streams expected, want 12 (each of 4 hears 3)", res.Totals.StreamsExpected)
	}
}

// TestSmokeAudioBridge runs audio bridge participants in two steps against strata's audio bridge
// (a room the run creates): every participant receives its mix, each step is measured, the
// listeners decode speech.
func TestSmokeAudioBridge(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	p := plan.AudioBridgeConference(httpURL, 4, 2, 3*time.Second)
	p.Room, p.CreateRoom, p.AudioBridge.Decode = 4044, true, 2
	res := smoke(t, p)
	if res.Totals.AudioBridge != 4 || len(res.Publishers) != 4 || res.Totals.StreamsExpected != 4 {
		t.Errorf("totals %+v", res.Totals)
	}
	if len(res.Steps) != 2 || res.Steps[0].Participants != 2 || res.Steps[1].Participants != 4 || res.StoppedBehind != 0 {
		t.Fatalf("steps %+v", res.Steps)
	}
	for _, st := range res.Steps {
		if !st.ServerOK || st.ServerCPUPct <= 0 || st.Audio.Frames == 0 || st.RecvMbps <= 0 || st.To-st.From < 1.5 {
			t.Errorf("step %+v", st)
		}
	}
	l := res.Totals.Listening
	t.Logf("audio %+v, listening %+v", res.Totals.Audio, l)
	if res.Totals.Audio.Frames == 0 || l.Listeners != 2 || l.Decoded == 0 || l.DecodeErrors != 0 || l.SpeechFrames == 0 || l.SpeechAudible < 0.3 {
		t.Errorf("the mixes: audio %+v, listening %+v", res.Totals.Audio, l)
	}
}

// TestSmokeSIP has three callers of strata's SIP plugin call sipp's echo service on loopback, in
// one step: every call connects, every caller gets its own audio back, bit for bit, and the two
// decoding callers hear it.
func TestSmokeSIP(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	echo, err := sipecho.Start("127.0.0.1", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Stop()
	p := plan.SIPEcho(httpURL, echo.URI, 3, 3, 2*time.Second)
	p.SIP.Decode = 2
	res := smoke(t, p)
	s := res.Totals.SIP
	t.Logf("sip %+v", s)
	if err := res.SIPCheck(); err != nil {
		t.Error(err)
	}
	if s.Calls != 3 || s.Listeners != 2 || s.EchoMatched == 0 || len(res.Steps) != 1 || res.Steps[0].Participants != 3 || res.Steps[0].EchoShare < 0.9 {
		t.Errorf("sip %+v, steps %+v", s, res.Steps)
	}
}

// TestSmokeVoiceConference is the SFU half: videoroom publishers sending voice, each hearing the
// others, timed like the mixes.
func TestSmokeVoiceConference(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	res := smoke(t, plan.VoiceConference(httpURL, 3, 3, 2*time.Second))
	if res.Totals.StreamsExpected != 3*2 || res.Totals.Audio.Frames == 0 || len(res.Steps) != 1 || res.Steps[0].Participants != 3 {
		t.Errorf("voice conference: totals %+v, steps %+v", res.Totals, res.Steps)
	}
}

func TestMainRejectsBadInput(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("server: http://x/janus\npublishers: -2\nmedai: audio\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"malformed plan", []string{"--plan", bad}, ExitUsage, "medai"},
		{"invalid numbers", []string{"--server", httpURL, "--publishers", "0", "--subscribers", "2"}, ExitUsage, "subscribers need at least one publisher"},
		{"no server", []string{"--publishers", "1"}, ExitUsage, "server: missing"},
		{"unreachable server", []string{"--server", "http://127.0.0.1:1/janus", "--quiet"}, ExitFailed, "cannot reach"},
		{"missing room", []string{"--server", httpURL, "--room", "987654", "--quiet"}, ExitFailed, "room 987654: room does not exist"},
		{"stray argument", []string{"--server", httpURL, "extra"}, ExitUsage, "unexpected argument"},
		{"bad server PIDs", []string{"--servers", httpURL + ",http://127.0.0.1:1/janus", "--server-pids", "12,x"}, ExitUsage, `--server-pids: "x" is not a process id`},
		{"a server twice", []string{"--servers", httpURL + "," + httpURL}, ExitUsage, "is listed twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(append(c.args, "--out", t.TempDir()), &stdout, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, c.code, stderr.String(), c.want)
			}
		})
	}
}

// TestInterruptedRunStillWritesResults interrupts `strata load` with SIGINT during the hold: it
// must exit 130 and still write what it measured.
func TestInterruptedRunStillWritesResults(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	// While any Notify is registered, SIGINT does not kill the test binary.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, os.Interrupt)
	defer signal.Stop(guard)
	out := t.TempDir()
	go func() {
		time.Sleep(4 * time.Second)
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"--server", httpURL, "--create-room", "--room", "777", "--publishers", "1", "--subscribers", "1",
		"--media", "audio", "--duration", "1m", "--server-pid", "0", "--out", out}, &stdout, &stderr)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitInterrupted, stderr.String())
	}
	res, err := report.ReadSummary(filepath.Join(out, report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Totals.ReceivedBytes == 0 || len(res.Streams) != 1 {
		t.Fatalf("interrupted summary: interrupted %v, received %d bytes, %d streams", res.Interrupted, res.Totals.ReceivedBytes, len(res.Streams))
	}
	if md, err := os.ReadFile(filepath.Join(out, report.ReportFile)); err != nil || !strings.Contains(string(md), "Interrupted") {
		t.Fatalf("report.md: %v", err)
	}
}
