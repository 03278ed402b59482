package policy

import "time"

// ProbeConfig tunes the trial-and-error policy.
type ProbeConfig struct {
	// StepInterval: the next layer is switched on after this long without loss (seed 000 saw the
	// original Jitsi Videobridge add a layer about every 5 s).
	StepInterval time.Duration `yaml:"step_interval"`
	// LossUp: a receiver report above this loss holds the next step back.
	LossUp float64 `yaml:"loss_up"`
	// LossDown: a receiver report above this loss switches the top layer off.
	LossDown float64 `yaml:"loss_down"`
	// BackoffMax bounds the step interval, which doubles when a step up is followed by loss within
	// one interval.
	BackoffMax time.Duration `yaml:"backoff_max"`
}

// DefaultProbeConfig returns the defaults.
func DefaultProbeConfig() ProbeConfig {
	return ProbeConfig{StepInterval: 5 * time.Second, LossUp: 0.02, LossDown: 0.05, BackoffMax: time.Minute}
}

// Probe is the classic trial-and-error switching the seeds call the original: with no knowledge of
// the path, it switches the next layer on after a timer when receivers report no loss and switches
// the top one off when they report loss. It ignores the bandwidth estimate. Layers are added in the
// same order as the bwe policy hands them out.
type Probe struct {
	cfg        ProbeConfig
	level      int
	started    bool
	lastChange time.Duration
	lastUp     time.Duration
	interval   time.Duration
	sawLoss    bool
}

// NewProbe returns the policy with cfg (zero fields take their defaults).
func NewProbe(cfg ProbeConfig) *Probe {
	d := DefaultProbeConfig()
	if cfg.StepInterval <= 0 {
		cfg.StepInterval = d.StepInterval
	}
	if cfg.LossDown <= 0 {
		cfg.LossDown = d.LossDown
	}
	if cfg.LossUp <= 0 || cfg.LossUp > cfg.LossDown {
		cfg.LossUp = min(d.LossUp, cfg.LossDown)
	}
	cfg.BackoffMax = max(cfg.BackoffMax, cfg.StepInterval)
	return &Probe{cfg: cfg, interval: cfg.StepInterval}
}

// Name returns "probe".
func (p *Probe) Name() string { return NameProbe }

// Decide implements Policy.
func (p *Probe) Decide(in *Input, out *Output) {
	now := in.Now
	pl := newPlan(in.Tracks)
	steps := len(pl.steps())
	if !p.started {
		p.started, p.lastChange = true, now
	}
	p.level = min(p.level, steps)
	out.Probe, out.Reason, out.Limited = 0, "", false
	switch {
	case in.Loss > p.cfg.LossDown && p.level > 0:
		if now-p.lastUp < p.interval {
			p.interval = min(2*p.interval, p.cfg.BackoffMax)
		} else {
			p.interval = p.cfg.StepInterval
		}
		p.level--
		p.lastChange, p.sawLoss = now, false
		out.Reason, out.Limited = "loss: top layer off", true
	case in.Loss > p.cfg.LossUp:
		p.sawLoss = true
	case now-p.lastChange >= p.interval && p.level < steps && !p.sawLoss:
		p.level++
		p.lastChange, p.lastUp = now, now
		out.Reason = "no loss: next layer on"
	case now-p.lastChange >= p.interval:
		p.lastChange, p.sawLoss = now, false // a lossy interval: wait another one
	}
	a := pl.level(p.level)
	out.Targets = pl.layers(a, out.Targets)
	out.Usage = pl.usage(a)
}
