package sim

import (
	"math/rand/v2"
	"time"
)

// OnOffSource draws an on/off flow's file sizes and idle periods from the
// flow's own generator, seeded from the run seed and the flow's name. The
// simulator's TCP flow and the emulator's kernel TCP flow both draw from it,
// so the same scenario and seed give both engines the same files and gaps as
// long as they draw in the same order (an idle period before each file, or
// a file first when StartOn).
type OnOffSource struct {
	cfg OnOffConfig
	rng *rand.Rand
}

// NewOnOffSource returns the generator of flow's on/off periods.
func NewOnOffSource(seed uint64, flow string, cfg OnOffConfig) *OnOffSource {
	return &OnOffSource{cfg: cfg, rng: NewRNG(seed, "flow/"+flow+"/onoff")}
}

// Size draws the next file's size in bytes, uniform in [SizeMin, SizeMax].
func (s *OnOffSource) Size() int {
	return s.cfg.SizeMin + s.rng.IntN(s.cfg.SizeMax-s.cfg.SizeMin+1)
}

// Off draws the next idle period, exponential with mean OffMean.
func (s *OnOffSource) Off() time.Duration {
	return time.Duration(s.rng.ExpFloat64() * float64(s.cfg.OffMean))
}
