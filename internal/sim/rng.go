package sim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// NewRNG returns a PRNG for one component, seeded from the run seed and the
// component's name. Components never share a generator, so the numbers one
// component draws do not depend on what the others do.
func NewRNG(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// laplace draws from a zero-mean Laplacian distribution with the given scale.
func laplace(rng *rand.Rand, scale float64) float64 {
	u := rng.Float64() - 0.5
	if u < 0 {
		return scale * math.Log(1+2*u)
	}
	return -scale * math.Log(1-2*u)
}
