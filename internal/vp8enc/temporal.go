package vp8enc

/*
#include <vpx/vp8cx.h>
*/
import "C"

import (
	"errors"
	"fmt"
)

// TemporalPattern is the temporal layer (TID) of each frame of a layered encoder's 4-frame
// period, which restarts at every keyframe: the base layer TL0 at a quarter of the frame rate,
// TL1 at a quarter, TL2 at half (RFC 7741's usual three-layer VP8 structure, libwebrtc's too).
var TemporalPattern = [4]int{0, 2, 1, 2}

// Reference and update flags of each frame of the period. Every frame predicts from the last
// base frame (LAST); the TL1 frame also becomes the golden frame, which the second TL2 frame
// predicts from as well. Only TL0 updates LAST and only TL1 updates golden, so dropping TL2, or
// TL1 and TL2, leaves a stream whose every frame has its references. Upper layers leave the
// entropy contexts alone for the same reason.
const (
	noRefOthers = C.VP8_EFLAG_NO_REF_GF | C.VP8_EFLAG_NO_REF_ARF
	noUpdAll    = C.VP8_EFLAG_NO_UPD_LAST | C.VP8_EFLAG_NO_UPD_GF | C.VP8_EFLAG_NO_UPD_ARF | C.VP8_EFLAG_NO_UPD_ENTROPY
)

var temporalFlags = [4]int64{
	noRefOthers | C.VP8_EFLAG_NO_UPD_GF | C.VP8_EFLAG_NO_UPD_ARF, // TL0: LAST → LAST
	noRefOthers | noUpdAll, // TL2: LAST → nothing
	noRefOthers | C.VP8_EFLAG_NO_UPD_LAST | C.VP8_EFLAG_NO_UPD_ARF | C.VP8_EFLAG_NO_UPD_ENTROPY, // TL1: LAST → golden
	C.VP8_EFLAG_NO_REF_ARF | noUpdAll, // TL2: LAST, golden → nothing
}

// temporalSync says which frames of the period are layer-sync frames (RFC 7741's Y bit): those
// that predict only from the base layer, so a receiver may start decoding their layer there.
var temporalSync = [4]bool{true, true, true, false}

// temporalIntraPct caps a layered encoder's keyframe at three base-layer frames' worth (libvpx
// measures it against the base layer's frame budget, at a quarter of the frame rate): an
// uncapped 720p keyframe takes a 2 Mbit/s path a quarter of a second, which a delay-based
// estimator reads as congestion every scene change.
const temporalIntraPct = 300

var errLayered = errors.New("vp8enc: a temporal-layered encoder keeps its rates and size")

// temporal is a layered encoder's place in the pattern.
type temporal struct {
	phase int // of the next frame in the period
	tid   int
	sync  bool
}

// next returns the flags and the layer of the frame about to be encoded.
func (t *temporal) next(key bool) (flags int64, layer int) {
	if key {
		t.phase = 0
	}
	i := t.phase % len(TemporalPattern)
	t.phase = i + 1
	t.tid, t.sync = PatternLayer(i)
	return temporalFlags[i], t.tid
}

// keyframe restarts the period at a keyframe (which refreshes every reference): it is a base
// frame, the next one the period's second.
func (t *temporal) keyframe() { t.phase, t.tid, t.sync = 1, 0, true }

// NewTemporal opens an encoder of three temporal layers (TemporalPattern) at the cumulative
// targets rates (bit/s: TL0, TL0+TL1, all three), for frames of width × height at fps. It places
// keyframes only where ForceKeyframe asks (and first), drops no frames, and keeps its rates
// and size (SetBitrate and Resize fail).
func NewTemporal(width, height int, fps float64, rates [3]float64) (*Encoder, error) {
	var ts [3]uint
	for i, r := range rates {
		if !(r > 0) || (i > 0 && r <= rates[i-1]) {
			return nil, fmt.Errorf("vp8enc: temporal layer rates %v must be positive and increasing (cumulative)", rates)
		}
		ts[i] = kbps(r)
	}
	return open(width, height, fps, rates[2], &ts)
}

// LastLayer is the temporal layer of the last frame Encode returned and whether it is a
// layer-sync frame; 0 and true for an encoder of one layer.
func (enc *Encoder) LastLayer() (tid int, sync bool) {
	if enc.layers == nil {
		return 0, true
	}
	return enc.layers.tid, enc.layers.sync
}

// PatternLayer is the temporal layer of the frame phase frames after a keyframe (the keyframe's
// phase is 0) and whether it is a layer-sync frame.
func PatternLayer(phase int) (tid int, sync bool) {
	i := phase % len(TemporalPattern)
	return TemporalPattern[i], temporalSync[i]
}
