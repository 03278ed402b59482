package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// OnOffConfig makes a TCP flow send files separated by idle periods: each
// file's size is uniform in [SizeMin, SizeMax] bytes and each idle period is
// exponentially distributed with mean OffMean (RFC 8867 section 5.7).
type OnOffConfig struct {
	SizeMin, SizeMax int
	OffMean          time.Duration
	StartOn          bool // begin with a file rather than an idle period
}

// TCPConfig describes a reliable window-controlled flow: TCP (Reno,
// NewReno, Cubic) or LEDBAT over the same transport. The transport owns
// sequence numbers, cumulative ACKs and retransmission; the controller owns
// the window, duplicate-ACK counting, recovery and the RTO, as
// cc.WindowController specifies.
type TCPConfig struct {
	Name, Kind, CC   string // Kind is "tcp" or "ledbat"
	Forward, Reverse []*Link
	Start, Stop      time.Duration
	MSS              int // payload bytes per segment (default 1448)
	Header           int // IP+TCP header bytes incl. timestamps (default 52)
	DelayedAck       int // segments per ACK (default 1: every segment)
	// RcvWindow is the receiver's advertised window in bytes: the sender
	// never has more than this beyond the cumulative ACK (default 4 MiB,
	// about what Linux autotuning reaches).
	RcvWindow     int
	DelAckTimeout time.Duration // default 200 ms
	ECN           bool
	// NoSACK turns selective acknowledgements off: losses are then found by
	// the controller's duplicate-ACK counting alone and repaired one per
	// round trip (RFC 6582 NewReno, or Reno). With SACK (the default, as in
	// Linux and ns-3) the transport finds losses from the SACK scoreboard
	// and repairs them as RFC 6675 does, gated by the controller's window.
	NoSACK     bool
	OnOff      *OnOffConfig
	Controller cc.WindowController
}

// TCPFlow is a window-based sender with its receiver.
type TCPFlow struct {
	sim      *Sim
	cfg      TCPConfig
	stats    *FlowStats
	fwd, rev Route
	rx       *tcpReceiver
	onoff    *OnOffSource // nil for a bulk flow

	una, nxt, high int64 // first unacknowledged, next to send, one past highest sent
	limit          int64 // no new segment at or beyond this (end of the current file)
	rtoAt          time.Duration
	timerArmed     bool
	sack           sackState
	// Files counts completed on/off transfers.
	Files int
}

const (
	evRTO int32 = iota + 10
	evFileStart
	evDelAck
)

// NewTCPFlow builds a TCP or LEDBAT flow and adds it to s.
func NewTCPFlow(s *Sim, cfg TCPConfig) (*TCPFlow, error) {
	if cfg.Controller == nil {
		return nil, fmt.Errorf("flow %s: no controller", cfg.Name)
	}
	if cfg.Kind == "" {
		cfg.Kind = "tcp"
	}
	setDefault(&cfg.MSS, 1448)
	setDefault(&cfg.Header, 52)
	setDefault(&cfg.DelayedAck, 1)
	setDefaultDur(&cfg.DelAckTimeout, 200*time.Millisecond)
	setDefault(&cfg.RcvWindow, 4<<20)
	if o := cfg.OnOff; o != nil && (o.SizeMin <= 0 || o.SizeMax < o.SizeMin || o.OffMean <= 0) {
		return nil, fmt.Errorf("flow %s: bad on/off parameters", cfg.Name)
	}
	f := &TCPFlow{sim: s, cfg: cfg, una: 1, nxt: 1, high: 1}
	if cfg.OnOff != nil {
		f.onoff = NewOnOffSource(s.cfg.Seed, cfg.Name, *cfg.OnOff)
	}
	f.stats = newFlowStats(s, cfg.Name, cfg.Kind, cfg.CC)
	f.stats.Start, f.stats.Stop = cfg.Start, cfg.Stop
	f.stats.Forward, f.stats.Reverse = cfg.Forward, cfg.Reverse
	f.rx = &tcpReceiver{flow: f, nxt: 1, ooo: newSeqSet()}
	f.fwd = Route{Links: cfg.Forward, Dst: f.rx}
	f.rev = Route{Links: cfg.Reverse, Dst: (*tcpSender)(f)}
	s.AddFlow(f)
	return f, nil
}

func setDefault(v *int, d int) {
	if *v <= 0 {
		*v = d
	}
}

func setDefaultDur(v *time.Duration, d time.Duration) {
	if *v <= 0 {
		*v = d
	}
}

// Stats returns the flow's statistics.
func (f *TCPFlow) Stats() *FlowStats { return f.stats }

func (f *TCPFlow) begin() {
	switch {
	case f.cfg.OnOff == nil:
		f.limit = math.MaxInt64
		f.sim.Schedule(f.cfg.Start, (*tcpSender)(f), evFileStart, 0, nil)
	case f.cfg.OnOff.StartOn:
		f.sim.Schedule(f.cfg.Start, (*tcpSender)(f), evFileStart, 1, nil)
	default:
		f.sim.Schedule(f.cfg.Start+f.offTime(), (*tcpSender)(f), evFileStart, 1, nil)
	}
}

func (f *TCPFlow) offTime() time.Duration {
	return f.onoff.Off()
}

type tcpSender TCPFlow

func (ts *tcpSender) HandleEvent(ev Event) {
	f := (*TCPFlow)(ts)
	switch ev.Kind {
	case evFileStart:
		if ev.Arg == 1 { // a new on/off file
			size := f.onoff.Size()
			f.limit = f.una + int64((size+f.cfg.MSS-1)/f.cfg.MSS)
		}
		f.trySend(ev.At)
	case evRTO:
		f.onTimer(ev.At)
	}
}

func (f *TCPFlow) inflight() int { return int(f.nxt-f.una) * f.cfg.MSS }

func (f *TCPFlow) trySend(now time.Duration) {
	if now >= f.cfg.Stop {
		return
	}
	if !f.cfg.NoSACK {
		f.trySendSACK(now)
		return
	}
	cwnd := max(f.cfg.Controller.Cwnd(), f.cfg.MSS)
	for f.nxt < f.limit && f.inflight()+f.cfg.MSS <= min(cwnd, f.cfg.RcvWindow) {
		f.sendSegment(now, f.nxt)
		f.nxt++
		f.high = max(f.high, f.nxt)
	}
	if f.una < f.nxt && f.rtoAt == 0 {
		f.armRTO(now)
	}
	f.stats.setCwnd(now, float64(f.cfg.Controller.Cwnd()))
}

func (f *TCPFlow) sendSegment(now time.Duration, seq int64) {
	p := f.sim.NewPacket()
	p.Kind, p.Size, p.Seq, p.SentAt, p.Stats = KindData, f.cfg.MSS+f.cfg.Header, seq, now, f.stats
	p.Retransmit, p.ECT = seq < f.high, f.cfg.ECN
	f.stats.onSent(now, p.Size)
	f.sim.Send(p, &f.fwd)
}

// armRTO (re)starts the retransmission timer. One timer event is pending at
// a time; when it fires early because the deadline moved, it re-arms.
func (f *TCPFlow) armRTO(now time.Duration) {
	f.rtoAt = now + f.cfg.Controller.RTO()
	if !f.timerArmed {
		f.timerArmed = true
		f.sim.Schedule(f.rtoAt, (*tcpSender)(f), evRTO, 0, nil)
	}
}

func (f *TCPFlow) onTimer(now time.Duration) {
	f.timerArmed = false
	if f.rtoAt == 0 {
		return
	}
	if now < f.rtoAt {
		f.timerArmed = true
		f.sim.Schedule(f.rtoAt, (*tcpSender)(f), evRTO, 0, nil)
		return
	}
	inflight := f.inflight()
	f.rtoAt = 0
	if f.cfg.NoSACK {
		f.nxt = f.una // go back N
	} else {
		f.sackTimeout()
	}
	f.cfg.Controller.OnTimeout(now, inflight)
	f.trySend(now)
}

// Receive handles an ACK arriving back at the sender.
func (ts *tcpSender) Receive(p *Packet) {
	f := (*TCPFlow)(ts)
	if !f.cfg.NoSACK {
		f.onAckSACK(p)
		return
	}
	now := f.sim.Now()
	ack := p.Ack
	a := cc.Ack{Now: now, InFlight: f.inflight(), RTT: now - p.Echo, OneWayDelay: p.OWD, CE: p.ECE && f.cfg.ECN}
	f.sim.Free(p)
	if ack < f.una || (ack == f.una && f.nxt == f.una) {
		return // reordered, or nothing outstanding: not a duplicate in RFC 5681's sense
	}
	if ack > f.una {
		a.Acked = int(ack-f.una) * f.cfg.MSS
		f.una = ack
		f.nxt = max(f.nxt, ack) // after a go-back-N the receiver may be ahead
	}
	f.stats.setRTT(now, a.RTT)
	if f.cfg.Controller.OnAck(a) {
		f.sendSegment(now, f.una)
	}
	if a.Acked > 0 {
		f.afterNewAck(now)
	}
	f.trySend(now)
}

// afterNewAck restarts or stops the RTO and ends an on/off file.
func (f *TCPFlow) afterNewAck(now time.Duration) {
	if f.una >= f.high {
		f.rtoAt = 0
	} else {
		f.armRTO(now)
	}
	if f.cfg.OnOff != nil && f.una >= f.limit && f.una == f.high {
		f.Files++
		f.sim.Schedule(now+f.offTime(), (*tcpSender)(f), evFileStart, 1, nil)
	}
}

// tcpReceiver acknowledges segments cumulatively, immediately when they are
// out of order or fill a hole, and otherwise every DelayedAck segments.
type tcpReceiver struct {
	flow     *TCPFlow
	nxt      int64
	ooo      *seqSet
	unacked  int
	delArmed bool
	delGen   int64
	last     struct {
		sentAt, owd time.Duration
		ce          bool
		sack        int64
	}
}

func (r *tcpReceiver) Receive(p *Packet) {
	f := r.flow
	now := f.sim.Now()
	good, immediate := 0, false
	switch {
	case p.Seq == r.nxt:
		good = f.cfg.MSS
		r.nxt++
		if r.ooo.has(r.nxt) {
			immediate = true // filled a hole
			for r.ooo.has(r.nxt) {
				r.ooo.clear(r.nxt)
				r.nxt++
			}
		}
	case p.Seq > r.nxt:
		if !r.ooo.has(p.Seq) {
			good = f.cfg.MSS
			r.ooo.set(r.nxt, p.Seq)
		}
		immediate = true
	default:
		immediate = true // duplicate
	}
	f.stats.onReceive(now, p, good)
	r.last.sentAt, r.last.owd, r.last.ce = p.SentAt, now-p.SentAt, p.CE
	r.last.sack = 0
	if p.Seq >= r.nxt {
		r.last.sack = p.Seq // still above the cumulative point: report it selectively
	}
	f.sim.Free(p)
	r.unacked++
	if immediate || r.unacked >= f.cfg.DelayedAck {
		r.sendAck(now)
		return
	}
	if !r.delArmed {
		r.delArmed = true
		r.delGen++
		f.sim.Schedule(now+f.cfg.DelAckTimeout, r, evDelAck, r.delGen, nil)
	}
}

func (r *tcpReceiver) HandleEvent(ev Event) {
	if r.delArmed && ev.Arg == r.delGen && r.unacked > 0 {
		r.sendAck(ev.At)
	}
}

func (r *tcpReceiver) sendAck(now time.Duration) {
	f := r.flow
	r.unacked, r.delArmed = 0, false
	p := f.sim.NewPacket()
	p.Kind, p.Size, p.SentAt, p.Stats = KindAck, f.cfg.Header, now, f.stats
	p.Ack, p.Echo, p.OWD, p.ECE, p.Sack = r.nxt, r.last.sentAt, r.last.owd, r.last.ce, r.last.sack
	f.sim.Send(p, &f.rev)
}

// seqSet records which segments above the cumulative point have arrived, as
// a bitmap ring that grows when the window does.
type seqSet struct{ bits []uint64 }

func newSeqSet() *seqSet { return &seqSet{bits: make([]uint64, 64)} }

func (s *seqSet) span() int64 { return int64(len(s.bits)) * 64 }

func (s *seqSet) has(seq int64) bool {
	i := seq & (s.span() - 1)
	return s.bits[i>>6]&(1<<(i&63)) != 0
}

func (s *seqSet) clear(seq int64) {
	i := seq & (s.span() - 1)
	s.bits[i>>6] &^= 1 << (i & 63)
}

// set marks seq, growing the ring if seq is too far above base.
func (s *seqSet) set(base, seq int64) {
	for seq-base >= s.span() {
		old := *s
		s.bits = make([]uint64, 2*len(old.bits))
		for q := base; q < base+old.span(); q++ {
			if old.has(q) {
				i := q & (s.span() - 1)
				s.bits[i>>6] |= 1 << (i & 63)
			}
		}
	}
	i := seq & (s.span() - 1)
	s.bits[i>>6] |= 1 << (i & 63)
}

func (f *TCPFlow) routes() []*Route { return []*Route{&f.fwd, &f.rev} }
