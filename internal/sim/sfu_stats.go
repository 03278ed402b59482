package sim

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/gcc"
)

// SessionStats are an SFU session's per-layer counters and series.
type SessionStats struct {
	Name, Policy string
	Layers       []LayerStats
	// BinForwarded is how many layers the SFU forwarded at the end of each interval (NaN before
	// the first decision).
	BinForwarded []float64
	bin          func(time.Duration) int
	interval     time.Duration
}

// LayerStats count one layer's packets between the SFU and the receiver.
type LayerStats struct {
	// Sent: packets of this layer the SFU put on the receiver path; Received: those that arrived;
	// SwitchDropped: those the switch dropped on the controller's rules before the path (not
	// counted in Sent: the switch is the controller's enforcement, not a loss).
	Sent, Received, SwitchDropped int64
	// GoodputBytes is the payload delivered.
	GoodputBytes int64
	// Per interval, by the interval the packet was sent in: packets sent and of those received;
	// and by arrival: payload bytes delivered.
	BinSent, BinRecvOfSent []int32
	BinGood                []int64
}

func newSessionStats(s *Sim, name, pol string, layers int) *SessionStats {
	st := NewSessionStats(name, pol, layers, s.bins(), s.cfg.Interval)
	st.bin = s.bin
	return st
}

func (st *SessionStats) setForwarded(now time.Duration, n int) {
	st.BinForwarded[st.bin(now)] = float64(n)
}

func (st *SessionStats) onSent(now time.Duration, layer int) {
	l := &st.Layers[layer]
	l.Sent++
	l.BinSent[st.bin(now)]++
}

func (st *SessionStats) onSwitchDrop(layer int) { st.Layers[layer].SwitchDropped++ }

func (st *SessionStats) onReceive(now time.Duration, p *Packet, payload int) {
	st.CountReceived(p.SentAt, now, int(p.Layer), payload)
}

// PER is the packet error rate of a layer: packets lost over packets sent towards the receiver,
// counting packets sent before until (later ones may still be in flight when the run ends). It
// is NaN when none were sent.
func (st *SessionStats) PER(layer int, until time.Duration) float64 {
	l := &st.Layers[layer]
	var sent, recv int64
	last := min(st.bin(until), len(l.BinSent))
	for b := 0; b < last; b++ {
		sent += int64(l.BinSent[b])
		recv += int64(l.BinRecvOfSent[b])
	}
	if sent == 0 {
		return nan()
	}
	return float64(sent-recv) / float64(sent)
}

// BinPER is a layer's packet error rate per interval (by send time; NaN where nothing was sent).
func (st *SessionStats) BinPER(layer int) []float64 {
	l := &st.Layers[layer]
	out := make([]float64, len(l.BinSent))
	for b := range out {
		out[b] = nan()
		if l.BinSent[b] > 0 {
			out[b] = float64(l.BinSent[b]-l.BinRecvOfSent[b]) / float64(l.BinSent[b])
		}
	}
	return out
}

func nan() float64 { return math.NaN() }

// Interval is the width of the series' bins.
func (st *SessionStats) Interval() time.Duration { return st.interval }

// sfuReceiver is a session's receiver: it counts what arrives, runs a receive-side estimator
// (REMB) and sends feedback and receiver reports back to the SFU.
type sfuReceiver struct {
	sess    *SFUSession
	est     *gcc.Receiver
	pending []Report
	next    int64
	// receiver-report accounting: highest sequence number and packets received at the last report
	repHighest, highest int64
	repCount, count     int64
	recvBytes           int64 // bytes since the last feedback
	lastFeedback        time.Duration
	reportDue           bool
}

const (
	evRxFeedback int32 = iota + 1
	evRxReport
)

func (r *sfuReceiver) Receive(p *Packet) {
	sess := r.sess
	now := sess.sim.Now()
	payload := 0
	if !p.Padding {
		payload = p.Size - sess.sfu.cfg.Overhead
		sess.layers.onReceive(now, p, payload)
	}
	sess.stats.onReceive(now, p, payload)
	r.pending = append(r.pending, Report{Seq: p.Seq, Arrival: now})
	r.est.OnPacket(cc.ReceivedPacket{SeqNo: p.Seq, SendTime: p.SentAt, Arrival: now, Size: p.Size})
	r.highest = max(r.highest, p.Seq)
	r.count++
	r.recvBytes += int64(p.Size)
	sess.sim.Free(p)
}

// HandleEvent sends transport feedback or marks a receiver report due.
func (r *sfuReceiver) HandleEvent(ev Event) {
	sess := r.sess
	if ev.At >= sess.cfg.Stop {
		return
	}
	switch ev.Kind {
	case evRxReport:
		r.reportDue = true
		sess.sim.Schedule(ev.At+sess.sfu.cfg.ReportInterval, r, evRxReport, 0, nil)
	case evRxFeedback:
		r.sendFeedback(ev.At)
		sess.sim.Schedule(ev.At+sess.sfu.cfg.FeedbackInterval, r, evRxFeedback, 0, nil)
	}
}

func (r *sfuReceiver) sendFeedback(now time.Duration) {
	sess := r.sess
	p := sess.sim.NewPacket()
	p.Kind, p.SentAt, p.Stats = KindFeedback, now, sess.stats
	for _, rep := range r.pending {
		for s := r.next; s < rep.Seq; s++ {
			p.Reports = append(p.Reports, Report{Seq: s, Lost: true})
		}
		p.Reports = append(p.Reports, rep)
		r.next = max(r.next, rep.Seq+1)
	}
	r.pending = r.pending[:0]
	p.Size = 48 + 2*len(p.Reports)
	r.est.OnRTT(now, sess.rtt())
	p.RxValid = true
	p.Rx = RxReport{Rate: r.est.Estimate().Bps(), Signal: -1}
	if dt := now - r.lastFeedback; dt > 0 {
		p.Rx.Recv = float64(r.recvBytes*8) / dt.Seconds()
	}
	r.recvBytes, r.lastFeedback = 0, now
	if r.reportDue {
		r.reportDue = false
		expected := r.highest - r.repHighest
		got := r.count - r.repCount
		p.Rx.Signal = 0
		if expected > 0 && got < expected {
			p.Rx.Signal = float64(expected-got) / float64(expected)
		}
		r.repHighest, r.repCount = r.highest, r.count
		p.Size += 32
	}
	sess.sim.Send(p, &sess.rev)
}
