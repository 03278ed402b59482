package sim

import "math/rand/v2"

// LossModel is the simulator's per-packet loss decision (random or
// Gilbert–Elliott), for code that wants the same losses outside a link, such
// as a test predicting which packets an emulated link drops.
type LossModel struct{ m *lossModel }

// NewLossModel returns cfg's model drawing from rng.
func NewLossModel(cfg LossConfig, rng *rand.Rand) *LossModel {
	return &LossModel{m: newLossModel(cfg, rng)}
}

// Lose advances the model by one packet and reports whether it is lost.
func (l *LossModel) Lose() bool { return l.m.lose() }
