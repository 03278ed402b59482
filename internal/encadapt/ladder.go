package encadapt

import "math"

// minPixels is ScalingSettings' kDefaultMinPixelsPerFrame: no step down below 320×180.
const minPixels = 320 * 180

// ladder is the stream's resolution restriction (VideoStreamAdapter's) and the resolution the
// video adapter makes of the capture under it (VideoAdapter's).
type ladder struct {
	w, h      int // the capture
	max       int // the ceiling on pixels per frame (math.MaxInt: none)
	target    int // the pixels asked for (max when the restriction sets none)
	steps     int // resolution adaptations in force
	outW, out int // cache: output width and pixels
	outH      int
}

func newLadder(w, h int) ladder {
	l := ladder{w: w, h: h, max: math.MaxInt, target: math.MaxInt}
	l.apply()
	return l
}

// down restricts the stream to at most 3/5 of pixels, the current output's pixel count; it
// reports false when that would go under minPixels.
func (l *ladder) down(pixels int) bool {
	t := pixels * 3 / 5
	if t >= l.max || t < minPixels {
		return false
	}
	l.max, l.target = t, t
	l.steps++
	l.apply()
	return true
}

// up asks for 5/3 of pixels with a ceiling of 12/5 of that; the last step lifts the restriction.
// It reports false when no step down is in force.
func (l *ladder) up(pixels int) bool {
	if l.steps == 0 {
		return false
	}
	l.steps--
	if l.steps == 0 {
		l.max, l.target = math.MaxInt, math.MaxInt
	} else {
		t := pixels * 5 / 3
		l.max, l.target = t*12/5, t
	}
	l.apply()
	return true
}

func (l *ladder) size() (w, h int) { return l.outW, l.outH }

// apply computes the output for the restriction: the capture scaled by the fraction, among
// 1, 3/4, 1/2, 3/8, 1/4, … (alternately ×3/4 and ×2/3), whose pixel count is nearest the target
// without exceeding the ceiling; sizes are rounded down to even, as 4:2:0 frames need.
func (l *ladder) apply() {
	num, den := scaleFor(l.w*l.h, min(l.target, l.max), l.max)
	l.outW, l.outH = (l.w*num/den)&^1, (l.h*num/den)&^1
	l.out = l.outW * l.outH
}

// scaleFor is VideoAdapter's FindScale without its variable start factor.
func scaleFor(input, target, ceiling int) (num, den int) {
	if target >= input {
		return 1, 1
	}
	bestNum, bestDen := 1, 1
	best := math.MaxInt
	if input <= ceiling {
		best = abs(input - target)
	}
	num, den = 1, 1
	for input*num*num/(den*den) > target {
		if num%3 == 0 && den%2 == 0 {
			num, den = num/3, den/2 // ×2/3
		} else {
			num, den = num*3, den*4 // ×3/4
		}
		px := input * num * num / (den * den)
		if px <= ceiling && abs(target-px) < best {
			best, bestNum, bestDen = abs(target-px), num, den
		}
		if num == 0 || px == 0 {
			break
		}
	}
	return bestNum, bestDen
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
