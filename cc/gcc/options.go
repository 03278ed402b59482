package gcc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// WithConfig replaces the whole configuration (start from DefaultConfig).
func WithConfig(c Config) Option { return func(d *Config) { *d = c } }

// WithInitialRate sets the start estimate.
func WithInitialRate(r cc.Bitrate) Option { return func(c *Config) { c.InitialRate = r } }

// WithMinRate sets the lower bound of every estimate.
func WithMinRate(r cc.Bitrate) Option { return func(c *Config) { c.MinRate = r } }

// WithMaxRate sets the upper bound of every estimate.
func WithMaxRate(r cc.Bitrate) Option { return func(c *Config) { c.MaxRate = r } }

// WithBurstTime sets the send-time grouping interval.
func WithBurstTime(d time.Duration) Option { return func(c *Config) { c.BurstTime = d } }

// WithOveruseTime sets how long the signal must exceed the threshold before over-use.
func WithOveruseTime(d time.Duration) Option { return func(c *Config) { c.OveruseTime = d } }

// WithInitialThreshold sets γ(0) in milliseconds.
func WithInitialThreshold(ms float64) Option { return func(c *Config) { c.InitialThreshold = ms } }

// WithDraftThresholdGains sets the draft's k_u and k_d.
func WithDraftThresholdGains(kUp, kDown float64) Option {
	return func(c *Config) { c.DraftKUp, c.DraftKDown = kUp, kDown }
}

// WithKalman sets the draft Kalman filter's q, e(0) and χ.
func WithKalman(q, e0, chi float64) Option {
	return func(c *Config) { c.KalmanQ, c.KalmanE0, c.KalmanChi = q, e0, chi }
}

// WithTrendline sets the trendline window, smoothing coefficient and gain.
func WithTrendline(window int, smoothing, gain float64) Option {
	return func(c *Config) { c.TrendlineWindow, c.TrendlineSmoothing, c.TrendlineGain = window, smoothing, gain }
}

// WithTrendlineThresholdGains sets the trendline detector's k_up and k_down.
func WithTrendlineThresholdGains(kUp, kDown float64) Option {
	return func(c *Config) { c.TrendKUp, c.TrendKDown = kUp, kDown }
}

// WithBeta sets the decrease factor.
func WithBeta(b float64) Option { return func(c *Config) { c.Beta = b } }

// WithEta sets the multiplicative increase per second.
func WithEta(e float64) Option { return func(c *Config) { c.Eta = e } }

// WithCapFactor sets the cap on the estimate in multiples of the received rate.
func WithCapFactor(f float64) Option { return func(c *Config) { c.CapFactor = f } }

// WithReceivedRateWindow sets the window of the received-rate measurement.
func WithReceivedRateWindow(d time.Duration) Option {
	return func(c *Config) { c.ReceivedRateWindow = d }
}

// WithRateUpdateInterval sets how often the draft receiver runs its rate controller.
func WithRateUpdateInterval(d time.Duration) Option {
	return func(c *Config) { c.RateUpdateInterval = d }
}

// WithLossThresholds sets the loss controller's low and high thresholds.
func WithLossThresholds(low, high float64) Option {
	return func(c *Config) { c.LossLow, c.LossHigh = low, high }
}

// WithDraftLossIncrease sets the draft loss controller's increase step and how often it acts.
func WithDraftLossIncrease(factor float64, interval time.Duration) Option {
	return func(c *Config) { c.DraftLossIncrease, c.DraftLossInterval = factor, interval }
}

// WithLossIncrease sets the send-side loss controller's increase per second.
func WithLossIncrease(factor float64) Option { return func(c *Config) { c.LossIncrease = factor } }

// WithPacingFactor sets the pacing rate in multiples of the target.
func WithPacingFactor(f float64) Option { return func(c *Config) { c.PacingFactor = f } }

// WithProbing turns all probing on or off.
func WithProbing(on bool) Option { return func(c *Config) { c.Probing = on } }

// WithInitialProbes sets the two initial probe rates in multiples of the start rate.
func WithInitialProbes(first, second float64) Option {
	return func(c *Config) { c.ProbeScales = [2]float64{first, second} }
}

// WithFurtherProbing sets the further-probe scale and the threshold that allows it.
func WithFurtherProbing(scale, threshold float64) Option {
	return func(c *Config) { c.ProbeFurtherScale, c.ProbeFurtherThreshold = scale, threshold }
}

// WithALRProbing turns periodic application-limited probes on or off and sets their interval
// and scale.
func WithALRProbing(on bool, interval time.Duration, scale float64) Option {
	return func(c *Config) { c.ALRProbing, c.ALRProbeInterval, c.ALRProbeScale = on, interval, scale }
}

// WithMaxProbeRate caps every probe.
func WithMaxProbeRate(r cc.Bitrate) Option { return func(c *Config) { c.MaxProbeRate = r } }

// WithProbeSize sets the minimum packets and duration of a probe cluster.
func WithProbeSize(packets int, d time.Duration) Option {
	return func(c *Config) { c.ProbeMinPackets, c.ProbeDuration = packets, d }
}

// WithALR sets the application-limited detector's budget, start and stop ratios.
func WithALR(budget, start, stop float64) Option {
	return func(c *Config) { c.ALRBudgetRatio, c.ALRStartRatio, c.ALRStopRatio = budget, start, stop }
}

// WithREMB sets the REMB interval and the drop ratio that sends one at once.
func WithREMB(interval time.Duration, dropRatio float64) Option {
	return func(c *Config) { c.REMBInterval, c.REMBDropRatio = interval, dropRatio }
}
