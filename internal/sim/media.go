package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Interval is a span of simulated time.
type Interval struct{ From, To time.Duration }

// MediaConfig describes an RTP media flow with a synthetic encoder, a pacer
// and per-packet (TWCC-like) feedback on the reverse path.
type MediaConfig struct {
	Name, CC         string
	Forward, Reverse []*Link
	Start, Stop      time.Duration
	Pauses           []Interval // the encoder sends nothing inside these
	Codec            CodecConfig
	PacketSize       int           // largest packet on the wire, bytes (default 1200)
	Overhead         int           // IP/UDP/RTP header bytes per packet (default 40)
	FeedbackInterval time.Duration // default 100 ms
	ECN              bool          // send ECT packets
	// PacerQueueLimit bounds how long the pacer may hold packets: the pacing
	// rate is raised to drain the queue within this time (default 2 s, as in
	// libwebrtc's pacer).
	PacerQueueLimit time.Duration
	Controller      cc.RateController
	Receiver        ReceiveSide // optional receive-side half
}

// ProbePadding is the padding a probe packet carries: the most an RTP packet can (its last byte
// counts it), and nothing else, as strata's senders probe (the emulator's Pion sender, the SFU's
// down-tracks). A probe packet on the wire is ProbePadding plus the flow's Overhead, so a cluster
// takes more, smaller packets than media: sized like media packets, the simulator's probes were
// twice the bytes of the real sender's and, on a slow link, twice the queue.
const ProbePadding = 255

// probeSize is a probe packet's size on the wire.
func (f *MediaFlow) probeSize() int { return min(f.cfg.PacketSize, ProbePadding+f.cfg.Overhead) }

type sentRecord struct {
	seq    int64
	sentAt time.Duration
	size   int
	probe  int
}

const historySize = 1 << 15

// MediaFlow is a media sender plus its receiver.
type MediaFlow struct {
	sim      *Sim
	cfg      MediaConfig
	stats    *FlowStats
	fwd, rev Route
	rx       *mediaReceiver
	encs     []*encoder
	layersOn int

	queue      []*Packet // pacer FIFO
	queueHead  int
	queueBytes int
	paceArmed  bool
	nextSend   time.Duration
	seq        int64
	hist       []sentRecord
	results    []cc.PacketResult
	prober     cc.Prober
	consumer   ReportConsumer
	shaper     interface{ SetShapingBuffer(bytes int) }
	probe      cc.ProbeCluster
	probeLeft  int // padding packets still to send in the current cluster
	target     float64
	pacing     float64
}

const (
	evFrame int32 = iota + 1
	evPace
	evFeedback
)

// NewMediaFlow builds a media flow and adds it to s.
func NewMediaFlow(s *Sim, cfg MediaConfig) (*MediaFlow, error) {
	if cfg.Controller == nil {
		return nil, fmt.Errorf("media flow %s: no controller", cfg.Name)
	}
	if cfg.PacketSize == 0 {
		cfg.PacketSize = 1200
	}
	if cfg.Overhead == 0 {
		cfg.Overhead = 40
	}
	if cfg.PacketSize <= cfg.Overhead {
		return nil, fmt.Errorf("media flow %s: packet size %d too small", cfg.Name, cfg.PacketSize)
	}
	if cfg.FeedbackInterval <= 0 {
		cfg.FeedbackInterval = 100 * time.Millisecond
	}
	if cfg.PacerQueueLimit <= 0 {
		cfg.PacerQueueLimit = 2 * time.Second
	}
	if err := errors.Join(cfg.Codec.Validate(), cfg.Codec.Simulated()); err != nil {
		return nil, fmt.Errorf("media flow %s: %w", cfg.Name, err)
	}
	f := &MediaFlow{sim: s, cfg: cfg, hist: make([]sentRecord, historySize)}
	f.stats = newFlowStats(s, cfg.Name, "media", cfg.CC)
	f.stats.Start, f.stats.Stop = cfg.Start, cfg.Stop
	f.stats.Forward, f.stats.Reverse = cfg.Forward, cfg.Reverse
	f.rx = &mediaReceiver{flow: f, next: 1}
	f.fwd = Route{Links: cfg.Forward, Dst: f.rx}
	f.rev = Route{Links: cfg.Reverse, Dst: (*mediaSender)(f)}
	nl := max(1, len(cfg.Codec.Layers))
	for i := 0; i < nl; i++ {
		f.encs = append(f.encs, newEncoder(cfg.Codec, NewRNG(s.cfg.Seed, fmt.Sprintf("flow/%s/codec/%d", cfg.Name, i))))
	}
	f.prober, _ = cfg.Controller.(cc.Prober)
	f.consumer, _ = cfg.Controller.(ReportConsumer)
	f.shaper, _ = cfg.Controller.(interface{ SetShapingBuffer(bytes int) })
	s.AddFlow(f)
	return f, nil
}

// Stats returns the flow's statistics.
func (f *MediaFlow) Stats() *FlowStats { return f.stats }

func (f *MediaFlow) begin() {
	f.sim.Schedule(f.cfg.Start, (*mediaSender)(f), evFrame, 0, nil)
	f.sim.Schedule(f.cfg.Start+f.cfg.FeedbackInterval, f.rx, evFeedback, 0, nil)
}

func (f *MediaFlow) paused(now time.Duration) bool {
	for _, p := range f.cfg.Pauses {
		if now >= p.From && now < p.To {
			return true
		}
	}
	return false
}

// payloadRate converts a wire rate into the payload rate the encoder should
// produce so that, with a header on every packet, the flow sends at wire.
func (f *MediaFlow) payloadRate(wire float64) float64 {
	return PayloadRate(wire, f.cfg.Codec.FPS, f.cfg.PacketSize, f.cfg.Overhead)
}

// mediaSender is the sending half; it handles frame and pacer events and
// receives feedback.
type mediaSender MediaFlow

func (ms *mediaSender) HandleEvent(ev Event) {
	f := (*MediaFlow)(ms)
	switch ev.Kind {
	case evFrame:
		f.onFrame(ev.At)
	case evPace:
		f.onPace(ev.At)
	}
}

func (f *MediaFlow) onFrame(now time.Duration) {
	if now >= f.cfg.Stop {
		return
	}
	ctl := f.cfg.Controller
	if f.shaper != nil {
		f.shaper.SetShapingBuffer(f.queueBytes)
	}
	ctl.OnTick(now)
	f.target, f.pacing = ctl.TargetRate().Bps(), ctl.PacingRate().Bps()
	f.stats.setTarget(now, f.target)
	if f.prober != nil && f.probeLeft == 0 {
		if req, ok := f.prober.NextProbe(now); ok && req.Rate > 0 {
			f.probe = req
			f.probeLeft = max(req.MinPackets, int(math.Ceil(float64(req.MinBytes)/float64(f.probeSize()))))
		}
	}
	var interval time.Duration
	if f.paused(now) {
		interval = time.Duration(float64(time.Second) / f.cfg.Codec.FPS)
	} else {
		interval = f.encode(now)
	}
	f.kickPacer(now)
	f.sim.Schedule(now+interval, (*mediaSender)(f), evFrame, 0, nil)
}

// encode produces one frame (one per active layer) and queues its packets.
func (f *MediaFlow) encode(now time.Duration) time.Duration {
	layers := f.cfg.Codec.Layers
	if len(layers) == 0 {
		size, interval := f.encs[0].frame(now, f.payloadRate(f.target))
		f.packetize(now, size, 0)
		return interval
	}
	n := activeLayers(layers, f.target)
	var interval time.Duration
	for i := 0; i < n; i++ {
		if i >= f.layersOn {
			f.encs[i].keyframe()
		}
		size, iv := f.encs[i].frame(now, f.payloadRate(layers[i]))
		if i == 0 {
			interval = iv
		}
		f.packetize(now, size, int8(i))
	}
	f.layersOn = n
	return interval
}

func (f *MediaFlow) packetize(now time.Duration, payload int, layer int8) {
	if payload <= 0 {
		return
	}
	per := f.cfg.PacketSize - f.cfg.Overhead
	n := (payload + per - 1) / per
	base, extra := payload/n, payload%n
	for i := 0; i < n; i++ {
		sz := base
		if i < extra {
			sz++
		}
		p := f.sim.NewPacket()
		p.Kind = KindMedia
		p.Size = sz + f.cfg.Overhead
		p.Layer = layer
		f.queue = append(f.queue, p)
		f.queueBytes += p.Size
	}
}

func (f *MediaFlow) kickPacer(now time.Duration) {
	if f.paceArmed || (f.queueHead == len(f.queue) && f.probeLeft == 0) {
		return
	}
	f.paceArmed = true
	f.sim.Schedule(max(now, f.nextSend), (*mediaSender)(f), evPace, 0, nil)
}

func (f *MediaFlow) onPace(now time.Duration) {
	f.paceArmed = false
	var p *Packet
	rate := f.pacing
	switch {
	case f.probeLeft > 0:
		p = f.sim.NewPacket()
		p.Kind, p.Size, p.Padding, p.Probe = KindMedia, f.probeSize(), true, f.probe.ID
		f.probeLeft--
		rate = f.probe.Rate.Bps()
	case f.queueHead < len(f.queue):
		p = f.queue[f.queueHead]
		f.queue[f.queueHead] = nil
		f.queueHead++
		f.queueBytes -= p.Size
		if f.queueHead == len(f.queue) {
			f.queue, f.queueHead = f.queue[:0], 0
		}
		// Drain a long pacer queue within PacerQueueLimit, as real pacers do.
		if drain := float64(f.queueBytes) * 8 / f.cfg.PacerQueueLimit.Seconds(); drain > rate && rate > 0 {
			rate = drain
		}
	default:
		return
	}
	f.transmit(now, p)
	if rate > 0 {
		f.nextSend = now + time.Duration(float64(p.Size)*8/rate*1e9)
	} else {
		f.nextSend = now
	}
	f.kickPacer(now)
}

func (f *MediaFlow) transmit(now time.Duration, p *Packet) {
	f.seq++
	p.Seq, p.SentAt, p.Stats, p.ECT = f.seq, now, f.stats, f.cfg.ECN
	f.hist[f.seq&(historySize-1)] = sentRecord{seq: f.seq, sentAt: now, size: p.Size, probe: p.Probe}
	f.cfg.Controller.OnPacketSent(cc.SentPacket{SeqNo: f.seq, SendTime: now, Size: p.Size, ProbeCluster: p.Probe})
	f.stats.onSent(now, p.Size)
	f.sim.Send(p, &f.fwd)
}

// Receive handles a feedback packet arriving back at the sender.
func (ms *mediaSender) Receive(p *Packet) {
	f := (*MediaFlow)(ms)
	now := f.sim.Now()
	f.results = f.results[:0]
	var rtt time.Duration
	for _, r := range p.Reports {
		rec := f.hist[r.Seq&(historySize-1)]
		if rec.seq != r.Seq {
			continue // too old to remember
		}
		f.results = append(f.results, cc.PacketResult{SeqNo: r.Seq, SendTime: rec.sentAt, Size: rec.size,
			ProbeCluster: rec.probe, Arrival: r.Arrival, Lost: r.Lost, CE: r.CE})
		if !r.Lost {
			rtt = now - rec.sentAt - (p.SentAt - r.Arrival)
		}
	}
	rx, rxValid := p.Rx, p.RxValid
	f.sim.Free(p)
	ctl := f.cfg.Controller
	if len(f.results) > 0 {
		ctl.OnFeedback(cc.Feedback{Now: now, Packets: f.results})
	}
	if rtt > 0 {
		f.stats.setRTT(now, rtt)
		ctl.OnRTT(now, rtt)
	}
	if rxValid && f.consumer != nil {
		f.consumer.OnReport(now, rx)
	}
}

// mediaReceiver collects arrivals and sends feedback periodically.
type mediaReceiver struct {
	flow    *MediaFlow
	pending []Report
	next    int64 // lowest sequence number not yet reported
}

func (r *mediaReceiver) Receive(p *Packet) {
	f := r.flow
	now := f.sim.Now()
	good := 0
	if !p.Padding {
		good = p.Size - f.cfg.Overhead
	}
	f.stats.onReceive(now, p, good)
	r.pending = append(r.pending, Report{Seq: p.Seq, Arrival: now, CE: p.CE})
	if f.cfg.Receiver != nil {
		f.cfg.Receiver.OnPacket(cc.ReceivedPacket{SeqNo: p.Seq, SendTime: p.SentAt, Arrival: now, Size: p.Size, CE: p.CE})
	}
	f.sim.Free(p)
}

func (r *mediaReceiver) HandleEvent(ev Event) {
	f := r.flow
	now := ev.At
	if len(r.pending) > 0 {
		r.sendFeedback(now)
	}
	f.sim.Schedule(now+f.cfg.FeedbackInterval, r, evFeedback, 0, nil)
}

func (r *mediaReceiver) sendFeedback(now time.Duration) {
	f := r.flow
	p := f.sim.NewPacket()
	p.Kind, p.SentAt, p.Stats = KindFeedback, now, f.stats
	for _, rep := range r.pending {
		for s := r.next; s < rep.Seq; s++ {
			p.Reports = append(p.Reports, Report{Seq: s, Lost: true})
		}
		p.Reports = append(p.Reports, rep)
		r.next = max(r.next, rep.Seq+1)
	}
	r.pending = r.pending[:0]
	// IP+UDP+RTCP+TWCC headers, then about two bytes per reported packet.
	p.Size = 48 + 2*len(p.Reports)
	if f.cfg.Receiver != nil {
		p.Rx, p.RxValid = f.cfg.Receiver.Report(now)
	}
	f.sim.Send(p, &f.rev)
}

func (f *MediaFlow) routes() []*Route { return []*Route{&f.fwd, &f.rev} }
