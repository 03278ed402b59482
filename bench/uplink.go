package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	launch "github.com/strata-rtc/strata/internal/chromium"
	"github.com/strata-rtc/strata/internal/rig"
)

// The uplink scenario measures how well Chromium's send-side congestion control (GCC, driven by
// the server's transport-wide feedback) uses a rate-limited uplink: Chromium runs the same
// janus.js echotest page (bench/uplink.html) against strata and against Janus, in a namespace of
// its own whose veth egress is a tbf at each cap. The page samples getStats() every 250 ms; the
// figures are taken over a steady window after a warm-up that covers GCC's start-up ramp:
//
//   - share: the video outbound-rtp bytesSent rate (payload, retransmissions included, no RTP
//     headers, audio or padding) divided by the cap;
//   - wire: the selected candidate pair's bytesSent rate (every SRTP/SRTCP/STUN payload: video,
//     audio, headers, padding, RTCP) divided by the cap; tbf also counts IP, UDP and Ethernet
//     headers (~46 bytes a packet), so this stays below 1 at a full link;
//   - RTT: remote-inbound-rtp roundTripTime, one value per receiver report the server sent in the
//     window (from roundTripTimeMeasurements and totalRoundTripTime), and the candidate pair's
//     STUN round trips the same way; p50 and p95;
//   - queue: the tbf's backlog divided by the rate, sampled every 200 ms (tc), p50 and p95: the
//     queueing delay itself, whatever the server reports; and the share of packets tbf dropped.

// uplinkConfig sizes the scenario.
type uplinkConfig struct {
	caps    []int // kbit/s
	warmup  time.Duration
	window  time.Duration
	queue   time.Duration // tbf latency: the longest a packet can wait in the queue at the cap
	burst   int           // tbf bucket, bytes
	runs    int           // repetitions of every (cap, server) pair
	vmodule string        // Chromium --vmodule for its own logging (diagnosis), empty for none
	// reference adds a call to another Chromium (in the server's namespace) at every cap: the
	// feedback Chromium's congestion control is built against (libwebrtc's own receiver).
	reference bool
	// noEcho asks the echotest to send nothing back (the reference call sends nothing back either):
	// the uplink then carries the media and the reports about it, and no feedback about an echo.
	noEcho bool
}

func defaultUplinkConfig() uplinkConfig {
	return uplinkConfig{caps: []int{250, 500, 750}, warmup: 20 * time.Second, window: 30 * time.Second,
		queue: 500 * time.Millisecond, burst: 1600, runs: 1, reference: true}
}

func parseCaps(s string) ([]int, error) {
	var caps []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("--uplink-caps %q: want kbit/s values such as 250,500,750", s)
		}
		caps = append(caps, v)
	}
	return caps, nil
}

// uplinkRun is one call: one server, one cap.
type uplinkRun struct {
	Target  string        `json:"target"`
	CapKbps int           `json:"cap_kbps"`
	Rep     int           `json:"rep"`
	Dir     string        `json:"dir"`
	Summary uplinkSummary `json:"summary"`
	Err     string        `json:"error,omitempty"`
}

// uplinkSummary is a call's figures over the steady window.
type uplinkSummary struct {
	WindowS       float64 `json:"window_s"`
	Samples       int     `json:"samples"`
	VideoKbps     float64 `json:"video_kbps"`
	Share         float64 `json:"share"`
	WireKbps      float64 `json:"wire_kbps"`
	WireShare     float64 `json:"wire_share"`
	AudioKbps     float64 `json:"audio_kbps"`
	RTTP50        float64 `json:"rtt_p50_ms"`
	RTTP95        float64 `json:"rtt_p95_ms"`
	RTTCount      int     `json:"rtt_count"`
	PairRTTP50    float64 `json:"pair_rtt_p50_ms"`
	PairRTTP95    float64 `json:"pair_rtt_p95_ms"`
	PairRTTCount  int     `json:"pair_rtt_count"`
	QueueP50      float64 `json:"queue_p50_ms"`
	QueueP95      float64 `json:"queue_p95_ms"`
	DropPct       float64 `json:"drop_pct"` // packets the rate limit dropped, of those it saw
	AvailKbps     float64 `json:"available_outgoing_kbps"`
	TargetKbps    float64 `json:"target_kbps"`
	RtxPct        float64 `json:"retransmitted_pct"`
	NACKs         float64 `json:"nacks"`
	LossPct       float64 `json:"loss_pct"` // remote-inbound packetsLost over packets sent in the window
	BWLimitedPct  float64 `json:"bandwidth_limited_pct"`
	CPULimitedPct float64 `json:"cpu_limited_pct"`
	FPS           float64 `json:"fps"`
	Resolution    string  `json:"resolution"`
	LoadMax       float64 `json:"load_max"`
}

// summarize computes a call's figures over [upAt+warmup, upAt+warmup+window] of the page's clock.
func summarize(st *pageState, capKbps int, warmup, window time.Duration) (uplinkSummary, error) {
	var s uplinkSummary
	from := st.UpAt + float64(warmup.Milliseconds())
	to := from + float64(window.Milliseconds())
	var in []uplinkSample
	for _, x := range st.Samples {
		if x.T >= from && x.T <= to+1 {
			in = append(in, x)
		}
	}
	if len(in) < 2 {
		return s, fmt.Errorf("%d samples in the window (%d in all): the call did not last", len(in), len(st.Samples))
	}
	a, b := in[0], in[len(in)-1]
	secs := (b.T - a.T) / 1000
	if secs < 0.8*window.Seconds() {
		return s, fmt.Errorf("the samples cover %.1f s of the %v window", secs, window)
	}
	rate := func(x0, x1 float64) float64 { return (x1 - x0) * 8 / secs / 1000 }
	s.WindowS, s.Samples = secs, len(in)
	s.VideoKbps = rate(a.VBytes, b.VBytes)
	s.Share = s.VideoKbps / float64(capKbps)
	s.WireKbps = rate(a.PBytes, b.PBytes)
	s.WireShare = s.WireKbps / float64(capKbps)
	s.AudioKbps = rate(a.ABytes, b.ABytes)
	if d := b.VBytes - a.VBytes; d > 0 {
		s.RtxPct = 100 * (b.VRtx - a.VRtx) / d
	}
	s.NACKs = b.NACK - a.NACK
	if d := b.VPkts - a.VPkts; d > 0 {
		s.LossPct = 100 * (b.RLost - a.RLost) / d
	}
	if d := (b.T - a.T) / 1000; d > 0 {
		s.BWLimitedPct = 100 * (b.QLD["bandwidth"] - a.QLD["bandwidth"]) / d
		s.CPULimitedPct = 100 * (b.QLD["cpu"] - a.QLD["cpu"]) / d
	}
	var rtt, pair []float64
	var avail, target, fps float64
	for i, x := range in {
		avail += x.Avail
		target += x.Target
		fps += x.FPS
		if i == 0 {
			continue
		}
		p := in[i-1]
		rtt = appendMeasurements(rtt, p.RRttN, x.RRttN, p.RRttSum, x.RRttSum)
		pair = appendMeasurements(pair, p.PRttN, x.PRttN, p.PRttSum, x.PRttSum)
	}
	n := float64(len(in))
	s.AvailKbps, s.TargetKbps, s.FPS = avail/n/1000, target/n/1000, fps/n
	s.RTTP50, s.RTTP95, s.RTTCount = percentile(rtt, 50), percentile(rtt, 95), len(rtt)
	s.PairRTTP50, s.PairRTTP95, s.PairRTTCount = percentile(pair, 50), percentile(pair, 95), len(pair)
	s.Resolution = fmt.Sprintf("%.0fx%.0f", b.W, b.H)
	return s, nil
}

// summarizeQueue adds the queueing delay and drops of the rate limit over the window.
func summarizeQueue(s *uplinkSummary, qs []rig.QueueSample, from, to time.Time) {
	var delays []float64
	var first, last *rig.QueueSample
	for i := range qs {
		q := &qs[i]
		if q.At.Before(from) || q.At.After(to) || q.Rate <= 0 {
			continue
		}
		if first == nil {
			first = q
		}
		last = q
		delays = append(delays, q.Backlog/q.Rate*1000)
	}
	s.QueueP50, s.QueueP95 = percentile(delays, 50), percentile(delays, 95)
	if first != nil && last != first {
		if seen := (last.Packets - first.Packets) + (last.Drops - first.Drops); seen > 0 {
			s.DropPct = 100 * (last.Drops - first.Drops) / seen
		}
	}
}

// appendMeasurements adds the round trips measured between two samples of a (count, total seconds)
// pair of counters, in ms: k new measurements with a total t are k values of t/k (getStats keeps
// only the last value, and a sample can span more than one).
func appendMeasurements(out []float64, n0, n1, sum0, sum1 float64) []float64 {
	k := int(n1 - n0)
	if k <= 0 || n0 == 0 {
		return out
	}
	v := (sum1 - sum0) / float64(k) * 1000
	for range k {
		out = append(out, v)
	}
	return out
}

// percentile is the nearest-rank percentile of xs (-1 when empty).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return -1
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// runUplink runs every (repetition, cap, server) call, each with a freshly started server and
// Chromium, and returns them in that order.
func runUplink(ctx context.Context, c config, ns *rig.Netns, log io.Writer) ([]*uplinkRun, error) {
	if err := ns.AddBrowser(); err != nil {
		_ = ns.Browser.Down()
		ns.Browser = nil
		return nil, err
	}
	defer func() {
		if err := ns.Browser.Down(); err != nil {
			fmt.Fprintf(log, "bench: %v\n", err)
		}
		ns.Browser = nil
	}()
	pages, err := servePages(ns.Browser.Name)
	if err != nil {
		return nil, err
	}
	defer pages.close()
	serverPages, err := servePages(ns.Name) // the reference receiver's
	if err != nil {
		return nil, err
	}
	defer serverPages.close()
	api := fmt.Sprintf("http://%s:%d/janus", ns.Browser.ServerIP, rig.APIPort)
	u := c.uplink
	var runs []*uplinkRun
	for rep := 1; rep <= u.runs; rep++ {
		for _, capKbps := range u.caps {
			targets := uplinkTargets(c)
			if rep%2 == 0 {
				slices.Reverse(targets) // alternate who goes first, so a drifting load favours neither
			}
			for _, tname := range targets {
				if ctx.Err() != nil {
					return runs, ctx.Err()
				}
				name := fmt.Sprintf("%dk", capKbps)
				if u.runs > 1 {
					name = fmt.Sprintf("%dk-%d", capKbps, rep)
				}
				dir, _ := filepath.Abs(filepath.Join(c.out, "uplink", tname, name))
				r := &uplinkRun{Target: tname, CapKbps: capKbps, Rep: rep, Dir: dir}
				fmt.Fprintf(log, "== %s: uplink %d kbit/s (run %d)\n", tname, capKbps, rep)
				if err := uplinkCall(ctx, c, ns, pages, serverPages, api, r); err != nil {
					r.Err = err.Error()
					fmt.Fprintf(log, "bench: uplink %s %d kbit/s: %v\n", tname, capKbps, err)
				} else {
					s := r.Summary
					fmt.Fprintf(log, "   share %.2f (video %.0f kbit/s), RTT p50/p95 %.0f/%.0f ms, load %.1f\n",
						s.Share, s.VideoKbps, s.RTTP50, s.RTTP95, s.LoadMax)
				}
				runs = append(runs, r)
				_ = writeJSON(filepath.Join(dir, "summary.json"), r)
			}
		}
	}
	return runs, nil
}

// referenceTarget names the reference calls (Chromium to Chromium) among the servers.
const referenceTarget = "chromium"

// uplinkTargets are the servers the uplink scenario calls, then the reference.
func uplinkTargets(c config) []string {
	t := slices.Clone(c.targets)
	if c.uplink.reference {
		t = append(t, referenceTarget)
	}
	return t
}

// uplinkCall runs one call: rate limit, server (or the receiving Chromium), Chromium, the call,
// the figures.
func uplinkCall(ctx context.Context, c config, ns *rig.Netns, pages, serverPages *pageServer, api string, r *uplinkRun) error {
	u := c.uplink
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	if err := ns.Browser.LimitUplink(r.CapKbps, u.burst, u.queue); err != nil {
		return err
	}
	var proc *rig.Process
	var recv *chromium
	if r.Target == referenceTarget {
		profile, err := os.MkdirTemp("", "strata-bench-chromium-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(profile)
		// The receiver captures nothing.
		recv, err = startChromium(ns.Name, profile, filepath.Join(r.Dir, "receiver-console.log"),
			filepath.Join(r.Dir, "receiver-chromium.log"), u.vmodule, launch.HostCandidates)
		if err != nil {
			return err
		}
		defer recv.close()
	} else {
		t := rig.StrataTarget(c.Strata, uplinkStrataYAML, c.extra)
		if r.Target == "janus" {
			t = rig.JanusPluginTarget(c.Janus, c.JanusLib, "echotest")
		}
		var err error
		if proc, err = rig.Start(t, ns, r.Dir); err != nil {
			return err
		}
		defer func() {
			if err := proc.Stop(rig.StopGrace); err != nil {
				fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			}
		}()
	}
	profile, err := os.MkdirTemp("", "strata-bench-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	br, err := startChromium(ns.Browser.Name, profile, filepath.Join(r.Dir, "console.log"),
		filepath.Join(r.Dir, "chromium.log"), u.vmodule)
	if err != nil {
		return err
	}
	defer br.close()
	load := sampleLoad(ctx)
	queue := sampleQueue(ctx, ns.Browser)
	hold := u.warmup + u.window + time.Second
	var st *pageState
	if recv != nil {
		st, err = br.callPeer(ctx, recv, pages.peerURL("send"), serverPages.peerURL("recv"), hold)
	} else {
		st, err = br.call(ctx, pages.url(api, !u.noEcho), hold)
	}
	r.Summary.LoadMax = load()
	qs := queue()
	_ = writeJSON(filepath.Join(r.Dir, "queue.json"), qs)
	_ = os.WriteFile(filepath.Join(r.Dir, "tc.txt"), []byte(ns.Browser.UplinkStats()+"\n"), 0o644)
	if st != nil {
		_ = writeJSON(filepath.Join(r.Dir, "samples.json"), st)
	}
	if err != nil {
		return err
	}
	if proc != nil && !proc.Alive() {
		return fmt.Errorf("%s died during the call: %s", r.Target, rig.Tail(proc.Log))
	}
	loadMax := r.Summary.LoadMax
	r.Summary, err = summarize(st, r.CapKbps, u.warmup, u.window)
	r.Summary.LoadMax = loadMax
	from := st.UpWall.Add(u.warmup)
	summarizeQueue(&r.Summary, qs, from, from.Add(u.window))
	return err
}

// sampleQueue reads the rate limit's queue every 200 ms until the returned function is called,
// which returns the samples.
func sampleQueue(ctx context.Context, b *rig.BrowserLink) func() []rig.QueueSample {
	done := make(chan struct{})
	res := make(chan []rig.QueueSample, 1)
	go func() {
		var qs []rig.QueueSample
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if q, err := b.Queue(); err == nil {
				qs = append(qs, q)
			}
			select {
			case <-ctx.Done():
			case <-done:
			case <-t.C:
				continue
			}
			res <- qs
			return
		}
	}()
	return func() []rig.QueueSample { close(done); return <-res }
}

// uplinkStrataYAML turns the benchmark's strata configuration into the echotest's.
const uplinkStrataYAML = "plugins: {echotest: {enabled: true}}"

// sampleLoad watches the 1-minute load average every 5 s until the returned function is called;
// that returns the highest value seen.
func sampleLoad(ctx context.Context) func() float64 {
	done := make(chan struct{})
	res := make(chan float64, 1)
	go func() {
		high := loadAvg1()
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
			case <-done:
			case <-t.C:
				high = max(high, loadAvg1())
				continue
			}
			res <- max(high, loadAvg1())
			return
		}
	}()
	return func() float64 { close(done); return <-res }
}

func loadAvg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
