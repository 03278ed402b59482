package sim

import (
	"fmt"
	"math/rand/v2"
)

// LossConfig describes a link's random loss. The zero value loses nothing.
//
// Model "random" drops each packet independently with probability P.
// Model "gilbert-elliott" is a two-state Markov chain evaluated per packet:
// from Good it moves to Bad with probability P, from Bad back to Good with
// probability R; a packet is lost with probability LossGood in Good and
// LossBad in Bad. The long-run loss is (R·LossGood + P·LossBad)/(P+R) and the
// mean time spent in Bad is 1/R packets.
type LossConfig struct {
	Model    string // "", "random" or "gilbert-elliott"
	P        float64
	R        float64
	LossGood float64
	LossBad  float64
}

// Validate checks probabilities.
func (c LossConfig) Validate() error {
	for _, v := range []float64{c.P, c.R, c.LossGood, c.LossBad} {
		if v < 0 || v > 1 {
			return fmt.Errorf("loss probability %v outside [0,1]", v)
		}
	}
	switch c.Model {
	case "", "none", "random":
	case "gilbert-elliott":
		if c.P > 0 && c.R == 0 {
			return fmt.Errorf("gilbert-elliott: r must be > 0 or the chain never leaves the bad state")
		}
	default:
		return fmt.Errorf("unknown loss model %q", c.Model)
	}
	return nil
}

// MeanLoss is the long-run fraction of packets the model loses.
func (c LossConfig) MeanLoss() float64 {
	switch c.Model {
	case "random":
		return c.P
	case "gilbert-elliott":
		if c.P+c.R == 0 {
			return c.LossGood
		}
		return (c.R*c.LossGood + c.P*c.LossBad) / (c.P + c.R)
	}
	return 0
}

// lossModel decides per packet whether it is lost.
type lossModel struct {
	cfg LossConfig
	rng *rand.Rand
	bad bool
}

func newLossModel(cfg LossConfig, rng *rand.Rand) *lossModel {
	return &lossModel{cfg: cfg, rng: rng}
}

// lose advances the model by one packet and reports whether it is lost.
func (m *lossModel) lose() bool {
	switch m.cfg.Model {
	case "random":
		return m.cfg.P > 0 && m.rng.Float64() < m.cfg.P
	case "gilbert-elliott":
		if m.bad {
			if m.rng.Float64() < m.cfg.R {
				m.bad = false
			}
		} else if m.rng.Float64() < m.cfg.P {
			m.bad = true
		}
		p := m.cfg.LossGood
		if m.bad {
			p = m.cfg.LossBad
		}
		return p > 0 && m.rng.Float64() < p
	}
	return false
}
