// Package report holds the result of a load run and writes it: summary.json, timeseries.csv (one
// row a second), streams.csv (one row per received stream), plots of server CPU and memory and of
// bandwidth against the number of participants (the shape of seed 001's figures 3 to 6), and a
// report.md. It also derives the figures the benchmarks compare: server CPU seconds per forwarded
// gigabit, memory per PeerConnection, and received quality.
package report

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// Result is everything a run measured.
type Result struct {
	Plan        plan.Plan `json:"plan"`
	Machine     Machine   `json:"machine"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	Interrupted bool      `json:"interrupted"`
	Errors      []string  `json:"errors,omitempty"`

	Server Server `json:"server"`
	// Nodes are the servers of a run spread over several (plan.Servers), in order; Server is
	// then their sum.
	Nodes     []Node    `json:"nodes,omitempty"`
	Generator Generator `json:"generator"`
	Totals    Totals    `json:"totals"`
	Samples   []Sample  `json:"-"`
	// Publishers are what each publisher sent.
	Publishers []Publisher `json:"publishers"`
	// Subscriptions are the receiving PeerConnections (pure subscribers and publishers' own).
	Subscriptions []Subscription `json:"subscriptions"`
	Streams       []Stream       `json:"streams"`
	// Steps are the windows of a stepped run (plan.Steps), in order; StoppedBehind is the number
	// of the step (from 1) after which the run stopped because the server fell behind, or 0.
	Steps         []Step `json:"steps,omitempty"`
	StoppedBehind int    `json:"stopped_behind,omitempty"`
}

// Machine is where the run happened.
type Machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	Kernel string `json:"kernel,omitempty"`
	// LoadAvg is the machine's 1-minute load average when the run ended: on a shared machine,
	// other work competes with both the server and the generator.
	LoadAvg float64 `json:"load_avg"`
}

// Server is what the sampler saw of the server process.
type Server struct {
	PID     int  `json:"pid"`
	Sampled bool `json:"sampled"`
	// InProcess is true when the server runs inside the generator's process, so CPU and memory
	// cannot be told apart (smoke tests only).
	InProcess        bool    `json:"in_process"`
	CPUSeconds       float64 `json:"cpu_seconds"`
	SteadyCPUSeconds float64 `json:"steady_cpu_seconds"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes"`
	BaselineRSSBytes int64   `json:"baseline_rss_bytes"`
	SteadyRSSBytes   int64   `json:"steady_rss_bytes"`
	PeakThreads      int     `json:"peak_threads"`
	// Net counters are those of the server's own network namespace (NetIsolated); otherwise they
	// would include everything else on the host and are left at zero.
	NetIsolated   bool   `json:"net_isolated"`
	NetInBytes    uint64 `json:"net_in_bytes"`
	NetOutBytes   uint64 `json:"net_out_bytes"`
	NetInPackets  uint64 `json:"net_in_packets"`
	NetOutPackets uint64 `json:"net_out_packets"`
}

// Generator is the load generator's own cost and health.
type Generator struct {
	CPUSeconds float64 `json:"cpu_seconds"`
	// SteadyCPUSeconds is the generator's CPU in the steady window, against which its cost per
	// forwarded gigabit is measured (Totals.GeneratorCPUSecondsPerGbit).
	SteadyCPUSeconds float64 `json:"steady_cpu_seconds"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes"`
	// Receiver is how subscriptions received (plan.Receiver). A light receiver counted Swallowed
	// packets at its sockets without Pion and had Pion decrypt Sampled others, of which Verified
	// had a sound payload and BadSamples did not; NACKs are the sequence numbers it asked for.
	Receiver   string `json:"receiver"`
	Swallowed  uint64 `json:"swallowed,omitempty"`
	Sampled    uint64 `json:"sampled,omitempty"`
	Verified   uint64 `json:"verified,omitempty"`
	BadSamples uint64 `json:"bad_samples,omitempty"`
	NACKs      uint64 `json:"nacks,omitempty"`
	// SocketReads are the light receivers' recvmmsg calls, which returned SocketDatagrams.
	SocketReads     uint64 `json:"socket_reads,omitempty"`
	SocketDatagrams uint64 `json:"socket_datagrams,omitempty"`
	// LateSkips counts times a publisher fell more than 500 ms behind real time (an overloaded
	// generator); SendErrors failed RTP writes.
	LateSkips  uint64 `json:"late_skips"`
	SendErrors uint64 `json:"send_errors"`
}

// Totals are the run's headline figures.
type Totals struct {
	Publishers      int `json:"publishers"`
	Subscribers     int `json:"subscribers"`
	AudioBridge     int `json:"audiobridge_participants"`
	Subscriptions   int `json:"subscriptions"`
	PeerConnections int `json:"peer_connections"`
	FailedJoins     int `json:"failed_joins"`

	SentBytes     uint64 `json:"sent_bytes"`
	ReceivedBytes uint64 `json:"received_bytes"`

	// Steady is the window after the last join in which per-gigabit and per-PeerConnection
	// figures are measured.
	SteadySeconds       float64 `json:"steady_seconds"`
	SteadyReceivedBytes uint64  `json:"steady_received_bytes"`
	ForwardedMbps       float64 `json:"forwarded_mbps"`
	CPUSecondsPerGbit   float64 `json:"cpu_seconds_per_gbit"`
	RSSPerPCBytes       float64 `json:"rss_per_pc_bytes"`

	StreamsExpected       int     `json:"streams_expected"`
	StreamsReceiving      int     `json:"streams_receiving"`
	MeanLossRatio         float64 `json:"mean_loss_ratio"`
	MaxLossRatio          float64 `json:"max_loss_ratio"`
	Freezes               uint64  `json:"freezes"`
	MeanTTFFMs            float64 `json:"mean_ttff_ms"`
	CompleteSubscribers   int     `json:"complete_subscriptions"`
	CompleteShare         float64 `json:"complete_share"`
	MeanVideoKbps         float64 `json:"mean_video_kbit_per_s"`
	MeanAudioKbps         float64 `json:"mean_audio_kbit_per_s"`
	GeneratorCPUPerServer float64 `json:"generator_cpu_per_server_cpu"`
	// GeneratorCPUSecondsPerGbit is the generator's own CPU per forwarded gigabit in the steady
	// window; GeneratorPerGbitShare is that over the server's (it must stay below 0.25 for the
	// generator's cost not to distort the server's on a shared machine).
	GeneratorCPUSecondsPerGbit float64 `json:"generator_cpu_seconds_per_gbit"`
	GeneratorPerGbitShare      float64 `json:"generator_per_gbit_share"`

	// Audio is the timing of every received audio stream over the whole run.
	Audio AudioTiming `json:"audio"`
	// Listening is what the decoding audio bridge participants heard.
	Listening Listening `json:"listening"`
	// SIP is what the SIP callers measured.
	SIP SIPTotals `json:"sip"`
}

// Sample is one second of the run.
type Sample struct {
	T               float64 // seconds since the start
	Publishers      int
	Subscribers     int
	AudioBridge     int // audio bridge participants
	SIPCalls        int // SIP callers
	PeerConnections int
	ServerOK        bool
	ServerCPUPct    float64 // of one core
	ServerCPUSec    float64 // cumulative
	ServerRSSBytes  int64
	ServerThreads   int
	NetInMbps       float64 // into the server (its namespace's interfaces)
	NetOutMbps      float64
	NetInPps        float64
	NetOutPps       float64
	GenCPUPct       float64
	GenCPUSec       float64 // cumulative
	GenRSSBytes     int64
	SentMbps        float64 // RTP the publishers sent
	RecvMbps        float64 // RTP the subscribers received
	RecvBytes       uint64  // cumulative
	LossPct         float64 // of the packets expected in this second
	LateFrames      uint64  // received audio frames late by more than 20 ms in this second
	// Nodes are the servers' own readings when the run has several (Result.Nodes).
	Nodes []NodeSample
}

// Participants is publishers plus receive-only subscribers plus audio bridge participants plus
// SIP callers.
func (s Sample) Participants() int { return s.Publishers + s.Subscribers + s.AudioBridge + s.SIPCalls }

// Publisher is what one publisher sent.
type Publisher struct {
	Index      int    `json:"index"`
	Packets    uint64 `json:"packets"`
	Bytes      uint64 `json:"bytes"`
	LateSkips  uint64 `json:"late_skips"`
	SendErrors uint64 `json:"send_errors"`
}

// Stream is one received stream.
type Stream struct {
	Subscription int `json:"subscription"`
	Owner        int `json:"owner"` // publisher index owning the subscription, -1 for a subscriber
	Feed         int `json:"feed"`  // publisher index, -1 if unknown
	// Server is the index in the plan's server list of the server the subscription joined.
	Server int    `json:"server,omitempty"`
	Mid    string `json:"mid"`
	rtpstats.Summary
}

// DetectMachine describes this machine from /proc.
func DetectMachine() Machine {
	m := Machine{CPU: runtime.GOARCH, Cores: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadAvg = LoadAverage()
	return m
}

// LoadAverage is the machine's 1-minute load average (0 if unknown).
func LoadAverage() float64 {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseFloat(f[0], 64)
			return v
		}
	}
	return 0
}
