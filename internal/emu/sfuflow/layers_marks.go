package sfuflow

import (
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sim"
)

// layerMarks are the DSCPs of temporal layers 0, 1 and 2: env's, or the SFU's defaults.
func (env Env) layerMarks() [3]uint8 {
	if env.LayerMarks != ([3]uint8{}) {
		return env.LayerMarks
	}
	var m [3]uint8
	copy(m[:], sfu.DefaultLayerDSCP())
	return m
}

// applyLinkCounts makes a temporal session's per-layer losses those the network counted on its
// downlink when the SFU marks the layers: a switch that drops a layer before the link leaves
// holes in the sequence numbers the receiver cannot tell from losses, while the link's counts
// per mark are exact (arrived at the link, dropped by it). What each layer received stays the
// receiver's count by TID; its sent becomes received plus the link's drops of its mark, spread
// over the intervals as the receiver saw its holes (or, with none, as the layer arrived). It
// returns false, changing nothing, when no packet of the session's layers' marks (the first
// len(st.Layers): a session of fewer layers is marked from the base up) reached the link: the
// receiver's counts stand.
func applyLinkCounts(st *sim.SessionStats, classes []topo.ClassCounts, marks [3]uint8) bool {
	if len(st.Layers) == 0 || len(st.Layers) > len(marks) {
		return false
	}
	var dropped [3]int64
	marked := false
	for _, c := range classes {
		for l, m := range marks[:len(st.Layers)] {
			if c.DSCP == m && c.Arrived > 0 {
				marked = true
				dropped[l] += c.Dropped
			}
		}
	}
	if !marked {
		return false
	}
	holes := make([]int64, len(st.Layers[0].BinSent))
	for _, l := range st.Layers {
		for b := range holes {
			holes[b] += int64(l.BinSent[b] - l.BinRecvOfSent[b])
		}
	}
	for i := range st.Layers {
		l := &st.Layers[i]
		weights := holes
		if sum(holes) == 0 {
			weights = make([]int64, len(holes))
			for b, n := range l.BinRecvOfSent {
				weights[b] = int64(n)
			}
		}
		lost := spread(dropped[i], weights)
		l.Sent = l.Received + dropped[i]
		for b := range l.BinSent {
			l.BinSent[b] = l.BinRecvOfSent[b] + int32(lost[b])
		}
	}
	return true
}

func sum(v []int64) (s int64) {
	for _, x := range v {
		s += x
	}
	return s
}

// spread divides total over the slots in proportion to weights (largest remainders first; all in
// the last slot when every weight is zero).
func spread(total int64, weights []int64) []int64 {
	out := make([]int64, len(weights))
	w := sum(weights)
	if total <= 0 || len(out) == 0 {
		return out
	}
	if w == 0 {
		out[len(out)-1] = total
		return out
	}
	left := total
	rem := make([]int64, len(weights))
	for b, x := range weights {
		out[b], rem[b] = total*x/w, total*x%w
		left -= out[b]
	}
	for ; left > 0; left-- { // the remainders, largest first: fewer than the slots that have one
		best := 0
		for b := range rem {
			if rem[b] > rem[best] {
				best = b
			}
		}
		out[best]++
		rem[best] = -1
	}
	return out
}
