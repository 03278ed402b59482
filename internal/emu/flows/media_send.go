package flows

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/bwe"
	"github.com/strata-rtc/strata/internal/ring"
	"github.com/strata-rtc/strata/internal/sim"
)

// rtpWriter is where the sender's packets go: the Pion track (or a sink in benchmarks).
type rtpWriter interface{ WriteRTP(p *rtp.Packet) error }

// Padding packets carry the most padding RTP allows (an 8-bit count) and nothing else, as the
// simulator's probes do (sim.ProbePadding): the receiver counts none of it as goodput.
const maxPadding = sim.ProbePadding

// pacerBurst is how far behind schedule the pacer may fall and catch up at once: timer wake-ups
// are late by tens of microseconds, which would otherwise lower the pacing rate.
const pacerBurst = 5 * time.Millisecond

// mediaSender is the sending half: the encoder, the packetiser and the pacer, run by one
// goroutine (loop) so that the queue needs no lock. The controller is reached through the
// estimator's lock, which the Pion interceptor feeding it feedback shares.
type mediaSender struct {
	m      *Media
	out    rtpWriter
	est    *bwe.Estimator
	prober cc.Prober
	shaper interface{ SetShapingBuffer(bytes int) }

	encs      []*sim.Encoder
	vpx       *vpxSource      // codec model libvpx, instead of encs
	encoded   <-chan vpxFrame // vpx's frames; nil (never ready) without it
	layersOn  int
	overhead  int // wire bytes of a packet that are not payload
	perPacket int // most payload bytes in a media packet
	queue     packetQueue
	target    float64
	pacing    float64
	probe     cc.ProbeCluster
	probeLeft int
	probing   bool

	start     time.Time // wall clock origin of RTP timestamps and abs-send-time
	nextFrame time.Time
	nextSend  time.Time
	pkt       rtp.Packet
	payload   []byte // synthetic payload, sliced per packet
	absID     uint8
	absTime   [3]byte
	writeErrs int
	late      int           // wake-ups later than lateWake
	maxLate   time.Duration // the latest

	// Counted by rtcpLoop (read after Stop, in tests).
	rxReports, lossReports int
}

// queued is one packet waiting in the pacer: its payload and wire sizes, the frame's RTP
// timestamp and whether it ends the frame.
type queued struct {
	size, wire int32
	ts         uint32
	marker     bool
}

// newMediaSender builds the sender; with codec model libvpx it opens the encoder, which the
// caller must run (vpx.run) to have frames and to free it.
func newMediaSender(m *Media, out rtpWriter, est *bwe.Estimator, absID uint8) (*mediaSender, error) {
	s := &mediaSender{m: m, out: out, est: est, absID: absID, overhead: m.overhead()}
	s.perPacket = m.spec.PacketSize - s.overhead
	s.payload = make([]byte, s.perPacket)
	s.queue.init(1024)
	s.prober, _ = m.ctl.Rate.(cc.Prober)
	s.shaper, _ = m.ctl.Rate.(interface{ SetShapingBuffer(bytes int) })
	if m.spec.Codec.Model == sim.ModelLibvpx {
		var err error
		if s.vpx, err = newVPXSource(m); err != nil {
			return nil, err
		}
		s.encoded = s.vpx.frames
	} else {
		for i := range max(1, len(m.spec.Codec.Layers)) {
			rng := sim.NewRNG(m.env.Seed, fmt.Sprintf("flow/%s/codec/%d", m.spec.Name, i))
			s.encs = append(s.encs, sim.NewEncoder(m.spec.Codec, rng))
		}
	}
	s.pkt.Version = 2
	s.pkt.PayloadType = mediaPayloadType
	return s, nil
}

// loop produces frames at the encoder's intervals and sends queued packets at the pacing rate
// until ctx ends.
func (s *mediaSender) loop(ctx context.Context) {
	s.start = time.Now()
	s.nextFrame, s.nextSend = s.start, s.start
	timer := time.NewTimer(0)
	defer timer.Stop()
	defer s.reportLate()
	if s.vpx != nil {
		defer func() { s.vpx.reportBusy(time.Since(s.start)) }()
	}
	for {
		now := time.Now()
		if !now.Before(s.nextFrame) {
			s.onFrame(now)
		}
		for s.pending() && !now.Before(s.nextSend) {
			s.sendOne(now)
		}
		wake := s.nextFrame
		if s.pending() && s.nextSend.Before(wake) {
			wake = s.nextSend
		}
		timer.Reset(time.Until(wake))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case f := <-s.encoded:
			s.onEncoded(f)
			continue
		}
		if late := time.Since(wake); late > lateWake {
			s.late++
			s.maxLate = max(s.maxLate, late)
		}
	}
}

// lateWake is how late a wake-up must be to count as the machine starving the sender.
const lateWake = 50 * time.Millisecond

// reportLate says how often the sender woke late: on a busy machine the pacer's schedule, and
// with it the flow's figures, are not what the controller asked for.
func (s *mediaSender) reportLate() {
	if s.late > 0 && s.m.env.Log != nil {
		fmt.Fprintf(s.m.env.Log, "media flow %s: the sender woke more than %v late %d times (worst %v): the machine was busy\n",
			s.m.spec.Name, lateWake, s.late, s.maxLate.Round(time.Millisecond))
	}
}

func (s *mediaSender) pending() bool { return s.probeLeft > 0 || s.queue.len() > 0 }

// onFrame runs the controller's timers, reads its rates and probe requests, and encodes one frame
// (one per active layer) unless the flow is paused, as the simulator's media flow does.
func (s *mediaSender) onFrame(now time.Time) {
	runNow := s.m.env.Clock.Now()
	if runNow >= s.m.spec.Stop {
		s.nextFrame = now.Add(time.Hour)
		return
	}
	s.est.With(func(ccNow time.Duration, c cc.RateController) {
		if s.shaper != nil {
			s.shaper.SetShapingBuffer(s.queue.bytes)
		}
		c.OnTick(ccNow)
		s.target, s.pacing = c.TargetRate().Bps(), c.PacingRate().Bps()
		if s.prober != nil && s.probeLeft == 0 {
			if req, ok := s.prober.NextProbe(ccNow); ok && req.Rate > 0 {
				s.probe = req
				s.probeLeft = max(req.MinPackets, int(math.Ceil(float64(req.MinBytes)/float64(maxPadding+s.overhead))))
			}
		}
	})
	s.m.env.Rec.Target(s.target)
	interval := time.Duration(float64(time.Second) / s.m.spec.Codec.FPS)
	if !s.paused(runNow) {
		interval = s.encode(runNow, s.rtpTime(now))
	}
	s.nextFrame = s.nextFrame.Add(interval)
	if s.nextFrame.Before(now) { // the machine stalled: skip frames rather than burst them
		s.nextFrame = now.Add(interval)
	}
}

func (s *mediaSender) paused(now time.Duration) bool {
	for _, p := range s.m.spec.Pauses {
		if now >= p.From && now < p.To {
			return true
		}
	}
	return false
}

// rtpTime is the 90 kHz RTP timestamp of wall time t.
func (s *mediaSender) rtpTime(t time.Time) uint32 {
	return uint32(t.Sub(s.start) * 90000 / time.Second)
}

// encode produces one frame per active layer and queues its packets; it returns the time until the
// next frame.
func (s *mediaSender) encode(now time.Duration, ts uint32) time.Duration {
	codec := &s.m.spec.Codec
	payloadRate := func(wire float64) float64 {
		return sim.PayloadRate(wire, codec.FPS, s.m.spec.PacketSize, s.overhead)
	}
	if s.vpx != nil {
		s.vpx.capture(now, payloadRate(s.target), ts)
		return time.Duration(float64(time.Second) / codec.FPS)
	}
	if len(codec.Layers) == 0 {
		size, interval := s.encs[0].Frame(now, payloadRate(s.target))
		s.packetize(size, ts)
		return interval
	}
	n := sim.ActiveLayers(codec.Layers, s.target)
	var interval time.Duration
	for i := range n {
		if i >= s.layersOn {
			s.encs[i].Keyframe()
		}
		size, iv := s.encs[i].Frame(now, payloadRate(codec.Layers[i]))
		if i == 0 {
			interval = iv
		}
		s.packetize(size, ts)
	}
	s.layersOn = n
	return interval
}

// onEncoded queues a frame libvpx encoded, unless the flow has stopped meanwhile.
func (s *mediaSender) onEncoded(f vpxFrame) {
	if s.m.env.Clock.Now() < s.m.spec.Stop {
		s.packetize(f.size, f.ts)
		s.vpx.queued++
	}
}

// packetize splits a frame of payload bytes into packets of equal size (within a byte), at most
// perPacket each, as the simulator does.
func (s *mediaSender) packetize(payload int, ts uint32) {
	if payload <= 0 {
		return
	}
	n := (payload + s.perPacket - 1) / s.perPacket
	base, extra := payload/n, payload%n
	for i := range n {
		size := base
		if i < extra {
			size++
		}
		s.queue.push(queued{size: int32(size), wire: int32(size + s.overhead), ts: ts, marker: i == n-1})
	}
}

// sendOne sends the next packet (probe padding first) and schedules the one after it.
func (s *mediaSender) sendOne(now time.Time) {
	rate := s.pacing
	var wire int
	if s.probeLeft > 0 {
		if !s.probing {
			s.est.BeginProbe(s.probe.ID)
			s.probing = true
		}
		wire = s.write(now, 0, s.pkt.Timestamp, false)
		rate = s.probe.Rate.Bps()
		if s.probeLeft--; s.probeLeft == 0 {
			s.est.EndProbe()
			s.probing = false
		}
	} else {
		q := s.queue.pop()
		wire = s.write(now, int(q.size), q.ts, q.marker)
		// Drain a long queue within pacerQueueLimit, as real pacers do.
		if drain := float64(s.queue.bytes) * 8 / pacerQueueLimit.Seconds(); drain > rate && rate > 0 {
			rate = drain
		}
	}
	if floor := now.Add(-pacerBurst); s.nextSend.Before(floor) {
		s.nextSend = floor
	}
	if rate > 0 {
		s.nextSend = s.nextSend.Add(time.Duration(float64(wire) * 8 / rate * 1e9))
	} else {
		s.nextSend = now
	}
}

// write sends one RTP packet: payload bytes of media, or padding when payload is 0. It returns the
// packet's size on the wire.
func (s *mediaSender) write(now time.Time, payload int, ts uint32, marker bool) int {
	h := &s.pkt.Header
	h.SequenceNumber++
	h.Timestamp, h.Marker = ts, marker
	if payload > 0 {
		s.pkt.Payload = s.payload[:payload]
		h.Padding, h.PaddingSize = false, 0
	} else {
		s.pkt.Payload = s.payload[:0]
		h.Padding, h.PaddingSize = true, maxPadding
		payload = maxPadding
	}
	if s.absID != 0 {
		// abs-send-time: 6.18 fixed-point seconds, the send times a receive-side estimator uses.
		v := uint32((uint64(now.Sub(s.start)) << 18) / uint64(time.Second))
		s.absTime = [3]byte{byte(v >> 16), byte(v >> 8), byte(v)}
		_ = h.SetExtension(s.absID, s.absTime[:])
	}
	if err := s.out.WriteRTP(&s.pkt); err != nil {
		if s.writeErrs++; s.writeErrs == 1 && s.m.env.Log != nil {
			fmt.Fprintf(s.m.env.Log, "media flow %s: sending: %v\n", s.m.spec.Name, err)
		}
	}
	return payload + s.overhead
}

// packetQueue is the pacer's FIFO with the wire bytes it holds; its ring grows when full and
// never shrinks, so steady state allocates nothing.
type packetQueue struct {
	packets ring.Ring[queued]
	bytes   int // wire bytes queued
}

func (q *packetQueue) init(capacity int) { q.packets = ring.New[queued](capacity) }

func (q *packetQueue) len() int { return q.packets.Len() }

func (q *packetQueue) push(p queued) {
	q.packets.Push(p)
	q.bytes += int(p.wire)
}

func (q *packetQueue) pop() queued {
	p := q.packets.Pop()
	q.bytes -= int(p.wire)
	return p
}
