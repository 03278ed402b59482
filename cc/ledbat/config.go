package ledbat

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Config holds LEDBAT's parameters (RFC 6817 §2.5 and §3.2, LEDBAT++ draft-01 §4).
type Config struct {
	// Target is TARGET: 100 ms (RFC 6817's maximum and usual value); LEDBAT++: 60 ms.
	Target time.Duration
	// Gain is GAIN (1, the RFC's maximum). LEDBAT++ ignores it and computes its dynamic gain.
	Gain float64
	// BaseHistory buckets of BaseBucket each hold the base delay (10 × 1 min).
	BaseHistory int
	BaseBucket  time.Duration
	// CurrentFilter is the number of recent samples whose minimum is the current delay (4, as
	// ns-3; the RFC leaves it to the implementation).
	CurrentFilter int
	// AllowedIncrease is ALLOWED_INCREASE in MSS (1).
	AllowedIncrease float64
	// MinCwnd and InitCwnd are MIN_CWND and INIT_CWND in MSS (2 and 2).
	MinCwnd, InitCwnd float64
	// MSS is the segment size in bytes (1460).
	MSS int
	// MinRTO is the lower bound on the retransmission timeout (RFC 6298: 1 s).
	MinRTO time.Duration

	// PlusPlus selects LEDBAT++.
	PlusPlus bool
	// SlowStartExit is the fraction of Target at which LEDBAT++'s slow start ends (¾).
	SlowStartExit float64
	// MaxGainDivisor bounds LEDBAT++'s dynamic gain from below: GAIN ≥ 1/16.
	MaxGainDivisor float64
	// DecreaseConstant is the draft's constant C in W·C·(qd/TARGET − 1) (1).
	DecreaseConstant float64
	// SlowdownRTTs is how long the window is frozen at MinCwnd during a slowdown (2 RTTs), and
	// SlowdownSpacing the gap between slowdowns in multiples of the last one's duration (9).
	SlowdownRTTs, SlowdownSpacing float64
	// Slowdowns turns LEDBAT++'s periodic slowdowns on (true).
	Slowdowns bool
}

// DefaultConfig returns RFC 6817's defaults.
func DefaultConfig() Config {
	return Config{
		Target: 100 * time.Millisecond, Gain: 1, BaseHistory: 10, BaseBucket: time.Minute,
		CurrentFilter: 4, AllowedIncrease: 1, MinCwnd: 2, InitCwnd: 2, MSS: 1460,
		MinRTO: cc.DefaultMinRTO, SlowStartExit: 0.75, MaxGainDivisor: 16, DecreaseConstant: 1,
		SlowdownRTTs: 2, SlowdownSpacing: 9, Slowdowns: true,
	}
}

// Option changes one parameter.
type Option func(*Config)

func newConfig(opts []Option) Config { return cc.NewConfig(DefaultConfig, opts, (*Config).sanitise) }

// sanitise repairs values that would divide by zero or invert bounds.
func (c *Config) sanitise(d Config) {
	if c.Target <= 0 {
		c.Target = d.Target
	}
	if c.MSS <= 0 {
		c.MSS = d.MSS
	}
	if c.BaseBucket <= 0 {
		c.BaseBucket = d.BaseBucket
	}
	c.MinCwnd = max(c.MinCwnd, 1)
	c.InitCwnd = max(c.InitCwnd, c.MinCwnd)
	if c.MaxGainDivisor < 1 {
		c.MaxGainDivisor = d.MaxGainDivisor
	}
}

// WithPlusPlus selects LEDBAT++ and its 60 ms target; options after it override.
func WithPlusPlus() Option {
	return func(c *Config) { c.PlusPlus, c.Target = true, 60*time.Millisecond }
}

// WithTarget sets TARGET.
func WithTarget(d time.Duration) Option { return func(c *Config) { c.Target = d } }

// WithGain sets GAIN (RFC 6817 mode).
func WithGain(g float64) Option { return func(c *Config) { c.Gain = g } }

// WithBaseHistory sets the base-delay history's bucket count and width.
func WithBaseHistory(buckets int, width time.Duration) Option {
	return func(c *Config) { c.BaseHistory, c.BaseBucket = buckets, width }
}

// WithCurrentFilter sets the current-delay filter's length.
func WithCurrentFilter(n int) Option { return func(c *Config) { c.CurrentFilter = n } }

// WithAllowedIncrease sets ALLOWED_INCREASE in MSS.
func WithAllowedIncrease(mss float64) Option { return func(c *Config) { c.AllowedIncrease = mss } }

// WithMinCwnd sets MIN_CWND in MSS.
func WithMinCwnd(mss float64) Option { return func(c *Config) { c.MinCwnd = mss } }

// WithInitCwnd sets INIT_CWND in MSS.
func WithInitCwnd(mss float64) Option { return func(c *Config) { c.InitCwnd = mss } }

// WithMSS sets the segment size in bytes.
func WithMSS(bytes int) Option { return func(c *Config) { c.MSS = bytes } }

// WithMinRTO sets the RTO's lower bound.
func WithMinRTO(d time.Duration) Option { return func(c *Config) { c.MinRTO = d } }

// WithSlowdowns turns LEDBAT++'s periodic slowdowns on or off and sets their hold time (RTTs) and
// spacing (multiples of the last slowdown's duration).
func WithSlowdowns(on bool, holdRTTs, spacing float64) Option {
	return func(c *Config) { c.Slowdowns, c.SlowdownRTTs, c.SlowdownSpacing = on, holdRTTs, spacing }
}

// WithDecrease sets LEDBAT++'s slow-start exit fraction, minimum gain divisor and decrease
// constant.
func WithDecrease(slowStartExit, maxGainDivisor, constant float64) Option {
	return func(c *Config) {
		c.SlowStartExit, c.MaxGainDivisor, c.DecreaseConstant = slowStartExit, maxGainDivisor, constant
	}
}
