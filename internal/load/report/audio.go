package report

import "github.com/strata-rtc/strata/internal/load/rtpstats"

// AudioTiming sums the timing of every received audio stream (an audio bridge participant's mix,
// or every stream an SFU conference participant hears): frames, frames late by more than one
// 20 ms period, inter-arrival gaps above two periods, inter-arrival p50/p99 and lateness p99 and
// maximum, in ms (1 ms buckets; 500 means 500 ms or more).
type AudioTiming struct {
	Frames          uint64  `json:"frames"`
	LateFrames      uint64  `json:"late_frames"`
	LateShare       float64 `json:"late_share"`
	Gaps            uint64  `json:"gaps"`
	InterarrivalP50 float64 `json:"interarrival_p50_ms"`
	InterarrivalP99 float64 `json:"interarrival_p99_ms"`
	LatenessP99     float64 `json:"lateness_p99_ms"`
	LatenessMax     float64 `json:"lateness_max_ms"`
}

// TimingOf summarises merged timing counts.
func TimingOf(c *rtpstats.TimingCounts) AudioTiming {
	t := AudioTiming{Frames: c.Frames, LateFrames: c.Late, Gaps: c.Gaps,
		InterarrivalP50: c.Interarrival.QuantileMs(0.5), InterarrivalP99: c.Interarrival.QuantileMs(0.99),
		LatenessP99: c.Lateness.QuantileMs(0.99), LatenessMax: c.Lateness.MaxMs()}
	if c.Frames > 0 {
		t.LateShare = float64(c.Late) / float64(c.Frames)
	}
	return t
}

// Listening sums what the decoding participants heard in the mix: mean levels (dBov) while
// someone else had been talking and while nobody else had, and the share of frames above
// client.AudibleDBov in each case.
type Listening struct {
	Listeners      int     `json:"listeners"`
	Decoded        uint64  `json:"decoded"`
	DecodeErrors   uint64  `json:"decode_errors"`
	SpeechFrames   uint64  `json:"speech_frames"`
	SpeechMeanDBov float64 `json:"speech_mean_dbov"`
	SpeechAudible  float64 `json:"speech_audible_share"`
	SilenceFrames  uint64  `json:"silence_frames"`
	SilenceDBov    float64 `json:"silence_mean_dbov"`
	SilenceAudible float64 `json:"silence_audible_share"`
}

// Step is one step of a stepped run, measured over its window (after the step's joins and a
// settling time).
type Step struct {
	Participants    int     `json:"participants"`
	PeerConnections int     `json:"peer_connections"`
	From            float64 `json:"from_s"`
	To              float64 `json:"to_s"`
	// Server: CPU in % of one core, RSS at the end of the window, traffic of its interfaces.
	ServerOK     bool    `json:"server_ok"`
	ServerCPUPct float64 `json:"server_cpu_pct"`
	// MixerCPUPct is the CPU of the server's audio mixing threads (decoding, mixing, encoding; in
	// strata also sending the mix), % of one core.
	MixerCPUPct    float64 `json:"mixer_cpu_pct"`
	ServerRSSBytes int64   `json:"server_rss_bytes"`
	NetInMbps      float64 `json:"net_in_mbps"`
	NetOutMbps     float64 `json:"net_out_mbps"`
	// RTP the clients sent and received.
	SentMbps float64 `json:"sent_mbps"`
	RecvMbps float64 `json:"recv_mbps"`
	// Generator CPU in % of one core; the machine's 1-minute load average at the window's end
	// (on a shared machine, other work competes with the server and the generator).
	GenCPUPct float64 `json:"generator_cpu_pct"`
	LoadAvg   float64 `json:"load_avg"`
	// Received audio in the window.
	Expected  uint64      `json:"expected"`
	Lost      uint64      `json:"lost"`
	LossRatio float64     `json:"loss_ratio"`
	Audio     AudioTiming `json:"audio"`
	// EchoShare is the share of the SIP callers' audio sent in the window that came back in it.
	EchoShare float64 `json:"echo_share,omitempty"`
	// Behind is set when the window's late frames or loss exceeded the plan's thresholds.
	Behind bool `json:"behind"`
}

// MixerCPUPerParticipant is the mixing threads' CPU per participant at this step, % of one core.
func (s Step) MixerCPUPerParticipant() float64 {
	if s.Participants == 0 {
		return 0
	}
	return s.MixerCPUPct / float64(s.Participants)
}

// CPUPerParticipant is the server's CPU per participant at this step, % of one core.
func (s Step) CPUPerParticipant() float64 {
	if s.Participants == 0 {
		return 0
	}
	return s.ServerCPUPct / float64(s.Participants)
}
