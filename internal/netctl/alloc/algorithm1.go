package alloc

import "github.com/strata-rtc/strata/cc"

// PathCapacity is c_min of seed 000's Algorithm 1: the minimum, over the links of a path, of their
// available capacity. An empty path (receiver on the SFU's node) has unlimited capacity, like
// c_min's initial value ∞.
//
// Algorithm 1 as printed keeps the maximum (line 7 reads "if c_i > c_min then c_min ← c_i",
// starting from c_min = ∞, so c_min never changes and every layer is always sent). A path carries
// no more than its narrowest link, so strata reads the comparison as a typo for c_i < c_min and
// takes the minimum.
func PathCapacity(available []cc.Bitrate) cc.Bitrate {
	cmin := cc.MaxBitrate
	for _, c := range available {
		if c < cmin {
			cmin = c
		}
	}
	return cmin
}

// Algorithm1 counts the layers that fit in cmin, as lines 11–20 of Algorithm 1: layers are added
// in order while the cumulative rate stays strictly below cmin; the first that does not fit ends
// the count.
func Algorithm1(cmin cc.Bitrate, layers []cc.Bitrate) int {
	var total cc.Bitrate
	for i, r := range layers {
		if total+r >= cmin {
			return i
		}
		total += r
	}
	return len(layers)
}

// stepPaper runs Algorithm 1 for every demand from the same snapshot: on each link of a demand's
// path, the capacity available to it is what the link leaves for managed streams minus what the
// other demands' current decisions use there ("capacity minus the load that is not this
// stream's"). With KeepBase the result is at least one layer.
func (a *Allocator) stepPaper(links []Link, demands []Demand, states []State) {
	a.residual = setLen(a.residual, len(links))
	for i := range a.residual {
		a.residual[i] = links[i].Available
	}
	for i := range demands {
		r := demands[i].Rate(states[i].Layers)
		for _, li := range demands[i].Path {
			a.residual[li] -= r // now: available minus every demand's use
		}
	}
	a.granted = setLen(a.granted, len(demands))
	for i := range demands {
		d := &demands[i]
		own := d.Rate(states[i].Layers)
		cmin, tight := cc.MaxBitrate, -1
		for _, li := range d.Path {
			if c := a.residual[li] + own; c < cmin {
				cmin, tight = c, li
			}
		}
		n := Algorithm1(cmin, d.Layers)
		over := false
		if n == 0 && a.cfg.KeepBase && len(d.Layers) > 0 {
			n, over = 1, true
		}
		a.granted[i] = n
		states[i].Over = over
		states[i].Limit = -1
		if n < len(d.Layers) || over {
			states[i].Limit = tight
		}
	}
	for i := range states {
		s := &states[i]
		s.started = true
		s.Layers, s.Target, s.Pending = a.granted[i], a.granted[i], 0
	}
}
