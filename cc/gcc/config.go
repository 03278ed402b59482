package gcc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Config holds every parameter of both variants. Defaults come from draft-ietf-rmcat-gcc-02 for
// the draft variant and from libwebrtc's published goog_cc for the send-side one; each field says
// which. Set fields with the With… options.
type Config struct {
	// InitialRate is the start estimate (libwebrtc's default start bitrate, 300 kbit/s).
	InitialRate cc.Bitrate
	// MinRate and MaxRate clamp every estimate (libwebrtc's congestion-controller minimum 5 kbit/s;
	// the maximum is the caller's: 100 Mbit/s by default).
	MinRate, MaxRate cc.Bitrate

	// BurstTime groups packets sent within it (draft §5.2 burst_time, 5 ms; libwebrtc the same).
	BurstTime time.Duration
	// OveruseTime is how long the signal must stay above the threshold (draft overuse_time_th,
	// 10 ms; libwebrtc the same).
	OveruseTime time.Duration
	// InitialThreshold is γ(0) in ms (12.5 in both).
	InitialThreshold float64
	// DraftKUp and DraftKDown are the draft's threshold gains k_u = 0.01 and k_d = 0.00018.
	DraftKUp, DraftKDown float64
	// KalmanQ is the process-noise variance q (draft: 10⁻³), KalmanE0 the initial error e(0)
	// (0.1) and KalmanChi the noise-variance filter coefficient χ (draft: in [0.001, 0.1]; 0.01).
	KalmanQ, KalmanE0, KalmanChi float64

	// TrendlineWindow (20), TrendlineSmoothing (0.9) and TrendlineGain (4) are libwebrtc's
	// trendline parameters; TrendKUp (0.0087) and TrendKDown (0.039) its threshold gains.
	TrendlineWindow                                         int
	TrendlineSmoothing, TrendlineGain, TrendKUp, TrendKDown float64

	// Beta is the decrease factor (draft: 0.85, range 0.8–0.95; libwebrtc 0.85).
	Beta float64
	// Eta is the multiplicative increase per second (draft: 1.08; libwebrtc 1.08).
	Eta float64
	// CapFactor bounds the estimate by CapFactor × the received rate (draft: 1.5; libwebrtc
	// 1.5 × acked + 10 kbit/s).
	CapFactor float64
	// ReceivedRateWindow is the window of the received rate R̂ (draft: 0.5–1 s; 500 ms).
	ReceivedRateWindow time.Duration
	// RateUpdateInterval is how often the draft receiver runs its rate controller while the
	// detector's verdict does not change (100 ms, about the feedback cadence).
	RateUpdateInterval time.Duration

	// LossLow and LossHigh are the loss controller's thresholds (2 % and 10 %, draft §6 and
	// libwebrtc v1).
	LossLow, LossHigh float64
	// DraftLossIncrease is the draft's increase step below LossLow (1.05 per report) and
	// DraftLossInterval how often it acts (one RTCP report interval, 1 s).
	DraftLossIncrease float64
	DraftLossInterval time.Duration
	// LossIncrease is libwebrtc v1's increase per second below LossLow (1.08).
	LossIncrease float64

	// PacingFactor multiplies the target to give the pacing rate (libwebrtc: 2.5).
	PacingFactor float64

	// Probing (libwebrtc ProbeController): disable with WithProbing(false).
	Probing bool
	// ProbeScales are the initial exponential probes, in multiples of the start rate (3 and 6).
	ProbeScales [2]float64
	// ProbeFurtherScale (2) and ProbeFurtherThreshold (0.7): while a result reaches
	// threshold × the last probe rate, probe again at scale × the new estimate.
	ProbeFurtherScale, ProbeFurtherThreshold float64
	// ALRProbeInterval (5 s) and ALRProbeScale (2): periodic probes while application-limited.
	ALRProbing       bool
	ALRProbeInterval time.Duration
	ALRProbeScale    float64
	// MaxProbeRate caps any probe (5 Mbit/s).
	MaxProbeRate cc.Bitrate
	// ProbeMinPackets (5) and ProbeDuration (15 ms) size a cluster.
	ProbeMinPackets int
	ProbeDuration   time.Duration

	// ALRBudgetRatio (0.65), ALRStartRatio (0.80) and ALRStopRatio (0.50) drive the
	// application-limited detector: an interval budget filled at 65 % of the estimate; ALR starts
	// when more than 80 % of it is unused and ends below 50 %.
	ALRBudgetRatio, ALRStartRatio, ALRStopRatio float64

	// REMBInterval (1 s) and REMBDropRatio (0.03): the receiver sends REMB once per interval and
	// at once when the estimate drops by the ratio (draft-alvestrand-rmcat-remb practice).
	REMBInterval  time.Duration
	REMBDropRatio float64
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		InitialRate:           300 * cc.Kbps,
		MinRate:               5 * cc.Kbps,
		MaxRate:               100 * cc.Mbps,
		BurstTime:             5 * time.Millisecond,
		OveruseTime:           10 * time.Millisecond,
		InitialThreshold:      12.5,
		DraftKUp:              0.01,
		DraftKDown:            0.00018,
		KalmanQ:               1e-3,
		KalmanE0:              0.1,
		KalmanChi:             0.01,
		TrendlineWindow:       20,
		TrendlineSmoothing:    0.9,
		TrendlineGain:         4,
		TrendKUp:              0.0087,
		TrendKDown:            0.039,
		Beta:                  0.85,
		Eta:                   1.08,
		CapFactor:             1.5,
		ReceivedRateWindow:    500 * time.Millisecond,
		RateUpdateInterval:    100 * time.Millisecond,
		LossLow:               0.02,
		LossHigh:              0.10,
		DraftLossIncrease:     1.05,
		DraftLossInterval:     time.Second,
		LossIncrease:          1.08,
		PacingFactor:          2.5,
		Probing:               true,
		ProbeScales:           [2]float64{3, 6},
		ProbeFurtherScale:     2,
		ProbeFurtherThreshold: 0.7,
		ALRProbing:            true,
		ALRProbeInterval:      5 * time.Second,
		ALRProbeScale:         2,
		MaxProbeRate:          5 * cc.Mbps,
		ProbeMinPackets:       5,
		ProbeDuration:         15 * time.Millisecond,
		ALRBudgetRatio:        0.65,
		ALRStartRatio:         0.80,
		ALRStopRatio:          0.50,
		REMBInterval:          time.Second,
		REMBDropRatio:         0.03,
	}
}

// Option changes one parameter.
type Option func(*Config)

func newConfig(opts []Option) Config { return cc.NewConfig(DefaultConfig, opts, (*Config).sanitise) }

// sanitise repairs values that would break the arithmetic (zero windows, inverted bounds), so that
// no option can make a controller panic or divide by zero.
func (c *Config) sanitise(d Config) {
	c.MinRate = max(c.MinRate, cc.BitPerSecond)
	c.MaxRate = min(max(c.MaxRate, c.MinRate), cc.MaxBitrate)
	c.InitialRate = min(max(c.InitialRate, c.MinRate), c.MaxRate)
	if c.BurstTime < 0 {
		c.BurstTime = d.BurstTime
	}
	if c.ReceivedRateWindow <= 0 {
		c.ReceivedRateWindow = d.ReceivedRateWindow
	}
	if c.TrendlineWindow < 2 || c.TrendlineWindow > maxTrendlineWindow {
		c.TrendlineWindow = d.TrendlineWindow
	}
	if c.InitialThreshold <= 0 {
		c.InitialThreshold = d.InitialThreshold
	}
	if c.Beta <= 0 || c.Beta >= 1 {
		c.Beta = d.Beta
	}
	if c.Eta < 1 {
		c.Eta = d.Eta
	}
	if c.CapFactor <= 0 {
		c.CapFactor = d.CapFactor
	}
	if c.KalmanChi <= 0 || c.KalmanChi >= 1 {
		c.KalmanChi = d.KalmanChi
	}
	if c.PacingFactor <= 0 {
		c.PacingFactor = d.PacingFactor
	}
	if c.ProbeMinPackets < 1 {
		c.ProbeMinPackets = 1
	}
	if c.REMBInterval <= 0 {
		c.REMBInterval = d.REMBInterval
	}
}
