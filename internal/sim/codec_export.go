package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// Encoder is the synthetic encoder of media flows, exported for senders
// outside the simulator (the emulator's Pion sender) so that both engines
// produce the same frames from the same seed.
type Encoder struct{ e *encoder }

// NewEncoder returns an encoder for cfg drawing from rng. Media flows seed
// one per layer with NewRNG(seed, "flow/NAME/codec/LAYER").
func NewEncoder(cfg CodecConfig, rng *rand.Rand) *Encoder { return &Encoder{newEncoder(cfg, rng)} }

// Frame returns the next frame's payload size in bytes and the time until
// the frame after it, for a payload target of target bit/s at time now.
func (e *Encoder) Frame(now time.Duration, target float64) (int, time.Duration) {
	return e.e.frame(now, target)
}

// Keyframe forces an I-frame at the next frame (statistical model).
func (e *Encoder) Keyframe() { e.e.keyframe() }

// ActiveLayers returns how many of a layered source's layers fit in target
// (at least one).
func ActiveLayers(layers []float64, target float64) int { return activeLayers(layers, target) }

// PayloadRate converts a wire rate into the payload rate an encoder at fps
// should produce so that, with overhead header bytes on every packet of at
// most packetSize bytes, the flow sends at wire.
func PayloadRate(wire, fps float64, packetSize, overhead int) float64 {
	perFrame := wire / 8 / fps
	packets := math.Ceil(perFrame / float64(packetSize))
	return math.Max(0, wire-packets*float64(overhead)*8*fps)
}
