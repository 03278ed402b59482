package tcp

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Variant selects the congestion-avoidance and recovery rules.
type Variant int8

// Variants.
const (
	Reno Variant = iota
	NewReno
	Cubic
)

var variantNames = [...]string{"reno", "newreno", "cubic"}

// String returns "reno", "newreno" or "cubic".
func (v Variant) String() string {
	if int(v) < 0 || int(v) >= len(variantNames) {
		return "unknown"
	}
	return variantNames[v]
}

// Config holds the models' parameters.
type Config struct {
	// MSS is the sender's maximum segment size in bytes (1460).
	MSS int
	// InitialWindow is the initial cwnd in segments; 0 applies RFC 5681's rule
	// min(4·MSS, max(2·MSS, 4380 bytes)).
	InitialWindow int
	// InitialSsthresh is the initial ssthresh in bytes; 0 means arbitrarily high (RFC 5681).
	InitialSsthresh int
	// DupThresh is the duplicate-ack count that triggers fast retransmit (3).
	DupThresh int
	// CubicC (0.4) and CubicBeta (0.7) are RFC 9438's C and β_cubic; FastConvergence (on) lowers
	// W_max when a flow loses before regaining its previous maximum.
	CubicC, CubicBeta float64
	FastConvergence   bool
	// MinRTO, MaxRTO and InitialRTO bound the retransmission timeout (RFC 6298: 1 s, 60 s, 1 s).
	MinRTO, MaxRTO, InitialRTO time.Duration
}

// DefaultConfig returns the RFC defaults.
func DefaultConfig() Config {
	return Config{
		MSS: 1460, DupThresh: 3, CubicC: 0.4, CubicBeta: 0.7, FastConvergence: true,
		MinRTO: cc.DefaultMinRTO, MaxRTO: cc.DefaultMaxRTO, InitialRTO: cc.DefaultInitialRTO,
	}
}

// Option changes one parameter.
type Option func(*Config)

func newConfig(opts []Option) Config { return cc.NewConfig(DefaultConfig, opts, (*Config).sanitise) }

// sanitise repairs values that would divide by zero or invert bounds.
func (c *Config) sanitise(d Config) {
	if c.MSS <= 0 {
		c.MSS = d.MSS
	}
	if c.DupThresh <= 0 {
		c.DupThresh = d.DupThresh
	}
	if c.CubicC <= 0 {
		c.CubicC = d.CubicC
	}
	if c.CubicBeta <= 0 || c.CubicBeta >= 1 {
		c.CubicBeta = d.CubicBeta
	}
}

func (c *Config) initialWindow() float64 {
	mss := float64(c.MSS)
	if c.InitialWindow > 0 {
		return float64(c.InitialWindow) * mss
	}
	return math.Min(4*mss, math.Max(2*mss, 4380))
}

// WithMSS sets the segment size.
func WithMSS(bytes int) Option { return func(c *Config) { c.MSS = bytes } }

// WithInitialWindow sets the initial window in segments.
func WithInitialWindow(segments int) Option { return func(c *Config) { c.InitialWindow = segments } }

// WithInitialSsthresh sets the initial ssthresh in bytes.
func WithInitialSsthresh(bytes int) Option { return func(c *Config) { c.InitialSsthresh = bytes } }

// WithDupThresh sets the duplicate-ack threshold.
func WithDupThresh(n int) Option { return func(c *Config) { c.DupThresh = n } }

// WithCubic sets Cubic's C and β and turns fast convergence on or off.
func WithCubic(c, beta float64, fastConvergence bool) Option {
	return func(cfg *Config) { cfg.CubicC, cfg.CubicBeta, cfg.FastConvergence = c, beta, fastConvergence }
}

// WithRTO sets the RTO's bounds and initial value.
func WithRTO(min, max, initial time.Duration) Option {
	return func(c *Config) { c.MinRTO, c.MaxRTO, c.InitialRTO = min, max, initial }
}
