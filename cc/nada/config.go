package nada

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Config holds NADA's parameters; defaults are RFC 8698's (Figure 3 / Table 1), which ns3-rmcat
// also uses.
type Config struct {
	Prio      float64       // PRIO, weight of the flow (1)
	XRef      time.Duration // XREF, reference congestion level (10 ms)
	Kappa     float64       // KAPPA, gradual-update scaling (0.5)
	Eta       float64       // ETA, gradual-update scaling of the signal's change (2)
	Tau       time.Duration // TAU, upper bound of the RTT in the gradual update (500 ms)
	Delta     time.Duration // DELTA, feedback/update interval (100 ms)
	LogWin    time.Duration // LOGWIN, observation window for loss, marks and r_recv (500 ms)
	QEps      time.Duration // QEPS, queuing-delay bound for accelerated ramp-up (10 ms)
	DFilt     time.Duration // DFILT, bound on the delay filters' latency (120 ms)
	GammaMax  float64       // GAMMA_MAX, upper bound of the ramp-up ratio (0.5)
	QBound    time.Duration // QBOUND, self-inflicted delay allowed during ramp-up (50 ms)
	MultiLoss float64       // MULTILOSS, loss-interval multiplier keeping warping on (7)
	QTh       time.Duration // QTH, queuing delay above which warping applies (50 ms)
	Lambda    float64       // LAMBDA, warping exponent (0.5)
	PLRRef    float64       // PLRREF, reference loss ratio (0.01)
	PMRRef    float64       // PMRREF, reference marking ratio (0.01)
	DLoss     time.Duration // DLOSS, delay penalty at PLRREF (10 ms)
	DMark     time.Duration // DMARK, delay penalty at PMRREF (2 ms)
	FPS       float64       // FPS, frame rate for buffer compensation (30)
	BetaV     float64       // BETA_V, encoder-rate buffer compensation (0.1)
	BetaS     float64       // BETA_S, sending-rate buffer compensation (0.1)
	Alpha     float64       // ALPHA, smoothing of loss and marking ratios (0.1)
	RMin      cc.Bitrate    // RMIN (150 kbit/s)
	// RMax is RMAX, the application's maximum rate. It also scales the gradual update's
	// equilibrium x = PRIO·XREF·RMAX/r. 0 (the default) means the application sets none: r_ref is
	// bounded only by NoRMaxCap and the equilibrium keeps RFC 8698's default RMAX (1.5 Mbit/s,
	// RefRMax) as its reference, so the delay NADA holds at a given rate is the RFC's while the
	// rate can follow a link above 1.5 Mbit/s.
	RMax cc.Bitrate
	// InitialRate is r_ref at start (ns3-rmcat: RMIN).
	InitialRate cc.Bitrate
	// XMax clips x_curr (ns3-rmcat: 500 ms).
	XMax time.Duration
	// FilterTaps is the minimum filter's length (RFC 8698 §5.1.1: 15).
	FilterTaps int
	// BaseBuckets and BaseBucket define the base-delay history (10 one-minute buckets, as
	// LEDBAT's; the RFC asks for a minimum over a long window).
	BaseBuckets int
	BaseBucket  time.Duration
}

// DefaultConfig returns RFC 8698's defaults.
func DefaultConfig() Config {
	return Config{
		Prio: 1, XRef: 10 * time.Millisecond, Kappa: 0.5, Eta: 2, Tau: 500 * time.Millisecond,
		Delta: 100 * time.Millisecond, LogWin: 500 * time.Millisecond, QEps: 10 * time.Millisecond,
		DFilt: 120 * time.Millisecond, GammaMax: 0.5, QBound: 50 * time.Millisecond, MultiLoss: 7,
		QTh: 50 * time.Millisecond, Lambda: 0.5, PLRRef: 0.01, PMRRef: 0.01,
		DLoss: 10 * time.Millisecond, DMark: 2 * time.Millisecond, FPS: 30, BetaV: 0.1, BetaS: 0.1,
		Alpha: 0.1, RMin: 150 * cc.Kbps, RMax: 0, InitialRate: 150 * cc.Kbps,
		XMax: 500 * time.Millisecond, FilterTaps: 15, BaseBuckets: 10, BaseBucket: time.Minute,
	}
}

const (
	// RefRMax is RFC 8698's default RMAX; with RMax unset it is the equilibrium's reference.
	RefRMax = 1500 * cc.Kbps
	// NoRMaxCap bounds r_ref when RMax is unset (GCC's default maximum).
	NoRMaxCap = 100 * cc.Mbps
)

// rateCap is the upper bound of r_ref.
func (c *Config) rateCap() cc.Bitrate {
	if c.RMax > 0 {
		return c.RMax
	}
	return max(NoRMaxCap, c.RMin)
}

// equilibriumRMax is the RMAX of the gradual update's equilibrium x = PRIO·XREF·RMAX/r.
func (c *Config) equilibriumRMax() cc.Bitrate {
	if c.RMax > 0 {
		return c.RMax
	}
	return RefRMax
}

// Option changes one parameter.
type Option func(*Config)

func newConfig(opts []Option) Config { return cc.NewConfig(DefaultConfig, opts, (*Config).sanitise) }

// sanitise repairs values that would divide by zero or invert bounds.
func (c *Config) sanitise(d Config) {
	c.RMin = max(c.RMin, cc.BitPerSecond)
	if c.RMax > 0 {
		c.RMax = min(max(c.RMax, c.RMin), cc.MaxBitrate)
	} else {
		c.RMax = 0
	}
	c.InitialRate = min(max(c.InitialRate, c.RMin), c.rateCap())
	positive := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	positive(&c.Tau, d.Tau)
	positive(&c.Delta, d.Delta)
	positive(&c.LogWin, d.LogWin)
	positive(&c.QTh, d.QTh)
	positive(&c.BaseBucket, d.BaseBucket)
	if c.PLRRef <= 0 {
		c.PLRRef = d.PLRRef
	}
	if c.PMRRef <= 0 {
		c.PMRRef = d.PMRRef
	}
	if c.Alpha <= 0 || c.Alpha > 1 {
		c.Alpha = d.Alpha
	}
	if c.Prio <= 0 {
		c.Prio = d.Prio
	}
}

// WithConfig replaces the whole configuration (start from DefaultConfig).
func WithConfig(c Config) Option { return func(d *Config) { *d = c } }

// WithPrio sets PRIO.
func WithPrio(p float64) Option { return func(c *Config) { c.Prio = p } }

// WithXRef sets XREF.
func WithXRef(d time.Duration) Option { return func(c *Config) { c.XRef = d } }

// WithGradual sets KAPPA, ETA and TAU.
func WithGradual(kappa, eta float64, tau time.Duration) Option {
	return func(c *Config) { c.Kappa, c.Eta, c.Tau = kappa, eta, tau }
}

// WithDelta sets DELTA.
func WithDelta(d time.Duration) Option { return func(c *Config) { c.Delta = d } }

// WithLogWin sets LOGWIN.
func WithLogWin(d time.Duration) Option { return func(c *Config) { c.LogWin = d } }

// WithRampUp sets QEPS, DFILT, GAMMA_MAX and QBOUND.
func WithRampUp(qeps, dfilt time.Duration, gammaMax float64, qbound time.Duration) Option {
	return func(c *Config) { c.QEps, c.DFilt, c.GammaMax, c.QBound = qeps, dfilt, gammaMax, qbound }
}

// WithWarping sets MULTILOSS, QTH and LAMBDA.
func WithWarping(multiLoss float64, qth time.Duration, lambda float64) Option {
	return func(c *Config) { c.MultiLoss, c.QTh, c.Lambda = multiLoss, qth, lambda }
}

// WithLossPenalty sets PLRREF and DLOSS.
func WithLossPenalty(plrRef float64, dLoss time.Duration) Option {
	return func(c *Config) { c.PLRRef, c.DLoss = plrRef, dLoss }
}

// WithMarkPenalty sets PMRREF and DMARK.
func WithMarkPenalty(pmrRef float64, dMark time.Duration) Option {
	return func(c *Config) { c.PMRRef, c.DMark = pmrRef, dMark }
}

// WithBufferCompensation sets FPS, BETA_V and BETA_S.
func WithBufferCompensation(fps, betaV, betaS float64) Option {
	return func(c *Config) { c.FPS, c.BetaV, c.BetaS = fps, betaV, betaS }
}

// WithAlpha sets ALPHA.
func WithAlpha(a float64) Option { return func(c *Config) { c.Alpha = a } }

// WithRMin sets RMIN.
func WithRMin(r cc.Bitrate) Option { return func(c *Config) { c.RMin = r } }

// WithRMax sets RMAX (0: none, see Config.RMax).
func WithRMax(r cc.Bitrate) Option { return func(c *Config) { c.RMax = r } }

// WithInitialRate sets the starting r_ref.
func WithInitialRate(r cc.Bitrate) Option { return func(c *Config) { c.InitialRate = r } }

// WithXMax sets the clip on x_curr.
func WithXMax(d time.Duration) Option { return func(c *Config) { c.XMax = d } }

// WithFilterTaps sets the minimum filter's length.
func WithFilterTaps(n int) Option { return func(c *Config) { c.FilterTaps = n } }

// WithBaseDelayHistory sets the base-delay history's bucket count and width.
func WithBaseDelayHistory(buckets int, width time.Duration) Option {
	return func(c *Config) { c.BaseBuckets, c.BaseBucket = buckets, width }
}
