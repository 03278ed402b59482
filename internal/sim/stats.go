package sim

import (
	"math"
	"time"
)

// FlowStats are one flow's counters and per-interval series, filled in as the
// simulation runs. Series are indexed by interval (Config.Interval wide).
type FlowStats struct {
	Name  string
	Kind  string // "media", "tcp" or "ledbat"
	CC    string // controller name
	Start time.Duration
	Stop  time.Duration
	// Forward lists the links data packets cross; Reverse the links feedback
	// or ACKs cross.
	Forward, Reverse []*Link

	SentPackets, SentBytes int64 // data packets emitted (including retransmissions)
	RecvPackets, RecvBytes int64 // data packets delivered to the receiver
	GoodputBytes           int64 // new payload bytes delivered (no duplicates, no headers)
	Dropped                int64 // data packets lost in the network
	ControlDropped         int64 // feedback or ACK packets lost in the network
	Marked                 int64 // data packets delivered with CE
	// QueueDelays holds every delivered data packet's time spent waiting in
	// queues, in seconds.
	QueueDelays []float32

	BinSent    []int64         // bytes sent per interval
	BinRecv    []int64         // bytes delivered per interval
	BinGood    []int64         // goodput bytes per interval
	BinQDelay  []time.Duration // sum of queue delays per interval
	BinQN      []int32         // delivered packets per interval
	BinLost    []int32         // data packets lost per interval
	BinTarget  []float64       // controller target rate (bit/s) at the end of the interval, NaN if unset
	BinCwnd    []float64       // congestion window (bytes) at the end of the interval, NaN if unset
	BinRTT     []float64       // latest RTT sample (s), NaN if unset
	binOfStats func(time.Duration) int
}

func newFlowStats(s *Sim, name, kind, cc string) *FlowStats {
	return NewFlowStats(name, kind, cc, s.bins(), s.cfg.Interval)
}

// NewFlowStats returns a flow's zeroed counters with bins per-interval slots
// (the last one takes everything later), for an engine other than the
// simulator to fill.
func NewFlowStats(name, kind, cc string, bins int, interval time.Duration) *FlowStats {
	return &FlowStats{Name: name, Kind: kind, CC: cc,
		BinSent: make([]int64, bins), BinRecv: make([]int64, bins), BinGood: make([]int64, bins),
		BinQDelay: make([]time.Duration, bins), BinQN: make([]int32, bins), BinLost: make([]int32, bins),
		BinTarget: nanSlice(bins), BinCwnd: nanSlice(bins), BinRTT: nanSlice(bins),
		binOfStats: func(t time.Duration) int { return min(int(t/interval), bins-1) }}
}

// Bin is the interval that time t falls in.
func (f *FlowStats) Bin(t time.Duration) int { return f.binOfStats(max(t, 0)) }

func nanSlice(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// onSent records a data packet leaving the sender.
func (f *FlowStats) onSent(now time.Duration, size int) {
	f.SentPackets++
	f.SentBytes += int64(size)
	f.BinSent[f.binOfStats(now)] += int64(size)
}

// onReceive records a data packet reaching the receiver; goodput is the new
// payload it delivers.
func (f *FlowStats) onReceive(now time.Duration, p *Packet, goodput int) {
	b := f.binOfStats(now)
	f.RecvPackets++
	f.RecvBytes += int64(p.Size)
	f.GoodputBytes += int64(goodput)
	f.BinRecv[b] += int64(p.Size)
	f.BinGood[b] += int64(goodput)
	f.BinQDelay[b] += p.Queued
	f.BinQN[b]++
	f.QueueDelays = append(f.QueueDelays, float32(p.Queued)*1e-9)
	if p.CE {
		f.Marked++
	}
}

func (f *FlowStats) onDrop(now time.Duration, p *Packet) {
	switch p.Kind {
	case KindMedia, KindData:
		f.Dropped++
		f.BinLost[f.binOfStats(now)]++
	default:
		f.ControlDropped++
	}
}

func (f *FlowStats) setTarget(now time.Duration, bps float64) { f.BinTarget[f.binOfStats(now)] = bps }
func (f *FlowStats) setCwnd(now time.Duration, bytes float64) { f.BinCwnd[f.binOfStats(now)] = bytes }
func (f *FlowStats) setRTT(now time.Duration, rtt time.Duration) {
	f.BinRTT[f.binOfStats(now)] = rtt.Seconds()
}

// ActiveTime is how long the flow was active within a run of length end.
func (f *FlowStats) ActiveTime(end time.Duration) time.Duration {
	stop := min(f.Stop, end)
	if stop <= f.Start {
		return 0
	}
	return stop - f.Start
}
