package cctest

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// RateConfig describes a closed-loop run of a rate controller.
type RateConfig struct {
	Link             Link
	Duration         time.Duration
	PacketSize       int           // media packet size in bytes (default 1200)
	FeedbackInterval time.Duration // receiver feedback period (default 50 ms)
	TickInterval     time.Duration // OnTick period (default 25 ms)
	SampleInterval   time.Duration // trace resolution (default 100 ms)
	// AppLimit caps the media rate below the controller's target (0: no cap), to model an
	// application-limited sender.
	AppLimit cc.Bitrate
}

func (c *RateConfig) defaults() {
	if c.PacketSize <= 0 {
		c.PacketSize = 1200
	}
	if c.FeedbackInterval <= 0 {
		c.FeedbackInterval = 50 * time.Millisecond
	}
	if c.TickInterval <= 0 {
		c.TickInterval = 25 * time.Millisecond
	}
	if c.SampleInterval <= 0 {
		c.SampleInterval = 100 * time.Millisecond
	}
}

type sentRecord struct {
	cc.PacketResult
}

type pendingFeedback struct {
	at time.Duration
	fb cc.Feedback
}

type probeBurst struct {
	cluster   cc.ProbeCluster
	remaining int
	next      time.Duration
	spacing   time.Duration
}

// rateRun is the state of one run; fields are advanced by RunRate's event loop.
type rateRun struct {
	cfg       RateConfig
	ctrl      cc.RateController
	link      Link
	sent      []sentRecord
	reported  int
	pending   []pendingFeedback
	burst     probeBurst
	delivered []int // bytes delivered per sample bin
	trace     Trace
}

// RunRate drives ctrl over cfg.Link for cfg.Duration: media packets at the controller's target
// (capped by AppLimit), probe clusters when the controller is a cc.Prober, feedback every
// FeedbackInterval delivered after the link's propagation delay, RTT samples with each feedback,
// and OnTick every TickInterval.
func RunRate(ctrl cc.RateController, cfg RateConfig) Trace {
	cfg.defaults()
	r := &rateRun{cfg: cfg, ctrl: ctrl, link: cfg.Link}
	r.delivered = make([]int, int(cfg.Duration/cfg.SampleInterval)+2)
	nextMedia, nextFeedback, nextTick, nextSample := time.Duration(0), cfg.FeedbackInterval, time.Duration(0), cfg.SampleInterval
	for {
		now := min(nextMedia, nextFeedback, nextTick, nextSample)
		if len(r.pending) > 0 {
			now = min(now, r.pending[0].at)
		}
		if r.burst.remaining > 0 {
			now = min(now, r.burst.next)
		}
		if now > cfg.Duration {
			break
		}
		switch {
		case len(r.pending) > 0 && r.pending[0].at == now:
			r.deliverFeedback()
		case now == nextTick:
			ctrl.OnTick(now)
			r.pollProbe(now)
			nextTick += cfg.TickInterval
		case r.burst.remaining > 0 && r.burst.next == now:
			r.send(now, r.burst.cluster.ID)
			r.burst.remaining--
			r.burst.next += r.burst.spacing
		case now == nextMedia:
			r.send(now, 0)
			nextMedia = now + r.mediaRate().TimeFor(cfg.PacketSize)
		case now == nextFeedback:
			r.generateFeedback(now)
			nextFeedback += cfg.FeedbackInterval
		default: // nextSample
			r.sample(now)
			nextSample += cfg.SampleInterval
		}
	}
	r.trace.Dropped = r.link.Dropped
	return r.trace
}

func (r *rateRun) mediaRate() cc.Bitrate {
	rate := r.ctrl.TargetRate()
	if r.cfg.AppLimit > 0 {
		rate = min(rate, r.cfg.AppLimit)
	}
	return max(rate, 10*cc.Kbps)
}

func (r *rateRun) pollProbe(now time.Duration) {
	p, ok := r.ctrl.(cc.Prober)
	if !ok || r.burst.remaining > 0 {
		return
	}
	c, ok := p.NextProbe(now)
	if !ok || c.Rate <= 0 {
		return
	}
	n := max(c.MinPackets, (c.MinBytes+r.cfg.PacketSize-1)/r.cfg.PacketSize)
	r.burst = probeBurst{cluster: c, remaining: n, next: now, spacing: c.Rate.TimeFor(r.cfg.PacketSize)}
}

func (r *rateRun) send(now time.Duration, probe int) {
	p := cc.PacketResult{SeqNo: int64(len(r.sent)), SendTime: now, Size: r.cfg.PacketSize, ProbeCluster: probe}
	r.ctrl.OnPacketSent(cc.SentPacket{SeqNo: p.SeqNo, SendTime: now, Size: p.Size, ProbeCluster: probe})
	arrival, dropped := r.link.Send(now, p.Size)
	p.Arrival, p.Lost = arrival, dropped
	r.sent = append(r.sent, sentRecord{p})
	r.trace.Sent++
	if !dropped {
		if bin := int(arrival / r.cfg.SampleInterval); bin < len(r.delivered) {
			r.delivered[bin] += p.Size
		}
	}
}

// generateFeedback reports, at receiver time now, every packet up to the last one that has
// arrived; losses are known once a later packet arrived (a sequence gap).
func (r *rateRun) generateFeedback(now time.Duration) {
	last := -1
	for k := r.reported; k < len(r.sent); k++ {
		p := r.sent[k]
		if p.Lost {
			continue
		}
		if p.Arrival > now {
			break
		}
		last = k
	}
	if last < 0 {
		return
	}
	pkts := make([]cc.PacketResult, 0, last+1-r.reported)
	for k := r.reported; k <= last; k++ {
		pkts = append(pkts, r.sent[k].PacketResult)
	}
	r.reported = last + 1
	at := now + r.link.Delay
	r.pending = append(r.pending, pendingFeedback{at: at, fb: cc.Feedback{Now: at, Packets: pkts}})
}

func (r *rateRun) deliverFeedback() {
	f := r.pending[0]
	r.pending = r.pending[1:]
	r.ctrl.OnFeedback(f.fb)
	lastP := f.fb.Packets[len(f.fb.Packets)-1]
	r.ctrl.OnRTT(f.at, lastP.Arrival-lastP.SendTime+r.link.Delay)
	r.pollProbe(f.at)
}

func (r *rateRun) sample(now time.Duration) {
	bin := int(now/r.cfg.SampleInterval) - 1
	delivered := cc.Bitrate(0)
	if bin >= 0 && bin < len(r.delivered) {
		delivered = cc.BitrateOf(r.delivered[bin], r.cfg.SampleInterval)
	}
	r.trace.Samples = append(r.trace.Samples, Sample{
		At: now, Target: r.ctrl.TargetRate(), QueueDelay: r.link.QueueDelay(now),
		Delivered: delivered, State: r.ctrl.State(),
	})
}

// ShiftArrivals wraps ctrl so that every feedback it receives reports arrival times offset by
// off, as when the receiver's clock (TWCC reference time) has an arbitrary origin. A controller
// that only uses arrival differences behaves identically with any offset.
func ShiftArrivals(ctrl cc.RateController, off time.Duration) cc.RateController {
	return &shifted{RateController: ctrl, off: off}
}

type shifted struct {
	cc.RateController
	off time.Duration
	buf []cc.PacketResult
}

func (s *shifted) OnFeedback(fb cc.Feedback) {
	s.buf = append(s.buf[:0], fb.Packets...)
	for i := range s.buf {
		s.buf[i].Arrival += s.off
	}
	fb.Packets = s.buf
	s.RateController.OnFeedback(fb)
}

// NextProbe forwards to the wrapped controller when it probes.
func (s *shifted) NextProbe(now time.Duration) (cc.ProbeCluster, bool) {
	if p, ok := s.RateController.(cc.Prober); ok {
		return p.NextProbe(now)
	}
	return cc.ProbeCluster{}, false
}

// Targets extracts the target-rate series of a trace.
func (t *Trace) Targets() []cc.Bitrate {
	out := make([]cc.Bitrate, len(t.Samples))
	for i, s := range t.Samples {
		out[i] = s.Target
	}
	return out
}
