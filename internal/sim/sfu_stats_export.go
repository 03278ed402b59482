package sim

import "time"

// NewSessionStats returns empty per-layer counters for an SFU session of a run with bins
// intervals of width interval: what the emulator fills from a real subscriber, so that both
// engines' sessions go through the same metrics.
func NewSessionStats(name, policy string, layers, bins int, interval time.Duration) *SessionStats {
	st := &SessionStats{Name: name, Policy: policy, Layers: make([]LayerStats, layers),
		BinForwarded: nanSlice(bins), interval: interval,
		bin: func(t time.Duration) int { return min(max(int(t/interval), 0), bins-1) }}
	for i := range st.Layers {
		st.Layers[i] = LayerStats{BinSent: make([]int32, bins), BinRecvOfSent: make([]int32, bins), BinGood: make([]int64, bins)}
	}
	return st
}

// CountSent counts a packet of layer (0 = base) the SFU sent towards the receiver at now.
func (st *SessionStats) CountSent(now time.Duration, layer int) { st.onSent(now, layer) }

// CountReceived counts a packet of layer sent at sentAt that reached the receiver at now with
// payload bytes of media.
func (st *SessionStats) CountReceived(sentAt, now time.Duration, layer, payload int) {
	l := &st.Layers[layer]
	l.Received++
	l.GoodputBytes += int64(payload)
	l.BinRecvOfSent[st.bin(sentAt)]++
	l.BinGood[st.bin(now)] += int64(payload)
}

// SetForwarded records that the SFU forwarded n layers at now.
func (st *SessionStats) SetForwarded(now time.Duration, n int) { st.setForwarded(now, n) }
