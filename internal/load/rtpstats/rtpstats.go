// Package rtpstats measures a received RTP stream without decoding it: packets and bytes, loss from
// sequence-number gaps (RFC 3550's extended sequence numbers, so reordering and wrap-around are
// handled), interarrival jitter (RFC 3550 §6.4.1), frames (marker bits) and VP8 keyframes, freezes
// (gaps between frames longer than a threshold) and the time to the first decodable frame.
//
// A Stream is fed one packet at a time with its arrival time, which the caller supplies (the
// package never reads the clock), and allocates nothing per packet. It is not safe for concurrent
// use; the load generator guards each stream with its own lock.
package rtpstats

import (
	"errors"
	"time"
)

// Kind says how frames are recognised.
type Kind uint8

const (
	// Audio treats every packet as a frame.
	Audio Kind = iota
	// Video ends a frame at the marker bit and finds VP8 keyframes in the payload.
	Video
)

func (k Kind) String() string {
	if k == Video {
		return "video"
	}
	return "audio"
}

// DefaultFreezeGap is the gap between frames counted as a freeze (the usual definition in WebRTC
// quality metrics).
const DefaultFreezeGap = 500 * time.Millisecond

// RFC 3550 appendix A.1 limits for what counts as a jump rather than reordering or loss.
const (
	maxDropout  = 3000
	maxMisorder = 100
)

// Config describes a stream.
type Config struct {
	Kind      Kind
	ClockRate uint32        // RTP clock: 48000 for Opus, 90000 for video
	FreezeGap time.Duration // 0 means DefaultFreezeGap
	// FramePeriod is an audio stream's packet duration, against which its Timing measures late
	// frames; 0 means DefaultFramePeriod. Video streams have no Timing.
	FramePeriod time.Duration
}

// DefaultFramePeriod is the duration of a WebRTC audio packet (Opus's usual 20 ms ptime).
const DefaultFramePeriod = 20 * time.Millisecond

// Stream accumulates one RTP stream's statistics.
type Stream struct {
	cfg   Config
	start time.Duration // when the subscriber asked for the stream (for time to first frame)

	// sequence tracking
	seen     bool
	baseExt  uint64 // extended sequence number of the first packet (after a resync)
	maxExt   uint64
	expPrior uint64 // expected and received before the last resync
	recPrior uint64
	received uint64 // packets since the last resync
	resyncs  uint64

	packets    uint64
	bytes      uint64
	first      time.Duration
	last       time.Duration
	lastTS     uint32
	jitter     float64 // in RTP clock units
	transit    int64
	hasTransit bool

	// frames
	frameTS      uint32
	frameKey     bool
	frameStarted bool
	decodable    bool // a keyframe has completed (video) or any packet arrived (audio)
	frames       uint64
	keyframes    uint64
	firstFrame   time.Duration
	lastFrame    time.Duration
	freezes      uint64
	freezeTime   time.Duration
	maxGap       time.Duration

	timing *Timing // audio only
}

// New returns an empty stream. start is when the stream was requested; the time to first frame
// is measured from it.
func New(cfg Config, start time.Duration) *Stream {
	if cfg.FreezeGap <= 0 {
		cfg.FreezeGap = DefaultFreezeGap
	}
	if cfg.ClockRate == 0 {
		cfg.ClockRate = 90000
	}
	if cfg.FramePeriod <= 0 {
		cfg.FramePeriod = DefaultFramePeriod
	}
	s := &Stream{cfg: cfg, start: start}
	if cfg.Kind == Audio {
		s.timing = NewTiming(cfg.ClockRate, cfg.FramePeriod)
	}
	return s
}

// ErrShort is returned for a packet too short to be RTP.
var ErrShort = errors.New("rtpstats: not an RTP packet")

// Observe accounts one packet (the whole RTP packet, header included) that arrived at time at.
func (s *Stream) Observe(pkt []byte, at time.Duration) error {
	h, err := ParseHeader(pkt)
	if err != nil {
		return err
	}
	s.account(h, len(pkt), at)
	s.trackFrames(h, pkt[h.PayloadOffset:len(pkt)-h.Padding], at)
	return nil
}

// ObserveHeader accounts a packet known only by its header and size (the length of the RTP
// packet, header included): an SRTP packet counted without decrypting it. Everything is measured
// as by Observe except VP8 keyframes, which need the payload: a video stream counted this way
// finds none, so it becomes decodable only through packets given to Observe.
func (s *Stream) ObserveHeader(h Header, size int, at time.Duration) {
	s.account(h, size, at)
	s.trackFrames(h, nil, at)
}

func (s *Stream) account(h Header, size int, at time.Duration) {
	s.packets++
	s.bytes += uint64(size)
	if s.packets == 1 {
		s.first = at
	}
	s.last = at
	s.trackSequence(h.Seq)
	s.trackJitter(h.Timestamp, at)
	if s.timing != nil {
		s.timing.Observe(h.Timestamp, at)
	}
	s.lastTS = h.Timestamp
}

func (s *Stream) trackSequence(seq uint16) {
	if !s.seen {
		s.seen = true
		s.baseExt = uint64(seq) + 1<<16 // room below for packets reordered before the first
		s.maxExt = s.baseExt
		s.received = 1
		return
	}
	maxSeq := uint16(s.maxExt)
	delta := seq - maxSeq // modulo 2^16
	switch {
	case delta == 0:
		// A duplicate (say, a retransmission of a packet that did arrive). RFC 3550 counts it too;
		// loss is clamped at zero, so duplicates can only mask losses, never make loss negative.
		s.received++
	case delta < maxDropout:
		s.maxExt += uint64(delta)
		s.received++
	case delta >= 1<<16-maxMisorder:
		// Reordered or retransmitted late: it fills a gap already counted as expected, or, if it
		// precedes the first packet seen, extends the expected range backwards.
		if ext := s.maxExt - uint64(maxSeq-seq); ext < s.baseExt {
			s.baseExt = ext
		}
		s.received++
	default:
		// a jump (an SFU switching source without rewriting, or a restart): start counting anew
		s.expPrior += s.expectedSinceResync()
		s.recPrior += s.received
		s.resyncs++
		s.baseExt = uint64(seq) + 1<<16
		s.maxExt = s.baseExt
		s.received = 1
	}
}

func (s *Stream) expectedSinceResync() uint64 {
	if !s.seen {
		return 0
	}
	return s.maxExt - s.baseExt + 1
}

func (s *Stream) trackJitter(ts uint32, at time.Duration) {
	arrival := int64(at) / int64(time.Microsecond) * int64(s.cfg.ClockRate) / 1e6
	transit := arrival - int64(ts)
	if s.hasTransit {
		d := transit - s.transit
		// RTP timestamps wrap at 2^32; a transit difference that large is a wrap, not jitter.
		if d > 1<<31 {
			d -= 1 << 32
		} else if d < -(1 << 31) {
			d += 1 << 32
		}
		if d < 0 {
			d = -d
		}
		s.jitter += (float64(d) - s.jitter) / 16
	}
	s.transit = transit
	s.hasTransit = true
}

func (s *Stream) trackFrames(h Header, payload []byte, at time.Duration) {
	if s.cfg.Kind == Audio {
		s.frameDone(at, true)
		return
	}
	if start, key, ok := VP8FrameStart(payload); ok && start {
		s.frameTS, s.frameKey, s.frameStarted = h.Timestamp, key, true
	}
	if !h.Marker {
		return
	}
	key := s.frameStarted && s.frameTS == h.Timestamp && s.frameKey
	s.frameStarted = false
	if key {
		s.keyframes++
	}
	s.frameDone(at, key)
}

// frameDone counts a completed frame; key says whether it can start decoding.
func (s *Stream) frameDone(at time.Duration, key bool) {
	s.frames++
	if !s.decodable {
		if !key {
			return // nothing is shown until the first keyframe
		}
		s.decodable = true
		s.firstFrame = at
		s.lastFrame = at
		return
	}
	s.gap(at - s.lastFrame)
	s.lastFrame = at
}

func (s *Stream) gap(g time.Duration) {
	if g > s.maxGap {
		s.maxGap = g
	}
	if g > s.cfg.FreezeGap {
		s.freezes++
		s.freezeTime += g
	}
}

// Summary is a stream's statistics at one moment.
type Summary struct {
	Kind       string  `json:"kind"`
	Packets    uint64  `json:"packets"`
	Bytes      uint64  `json:"bytes"`
	Expected   uint64  `json:"expected"`
	Lost       uint64  `json:"lost"`
	LossRatio  float64 `json:"loss_ratio"`
	JitterMs   float64 `json:"jitter_ms"`
	KbitPerSec float64 `json:"kbit_per_s"`
	Frames     uint64  `json:"frames"`
	Keyframes  uint64  `json:"keyframes"`
	FPS        float64 `json:"fps"`
	Freezes    uint64  `json:"freezes"`
	FreezeMs   float64 `json:"freeze_ms"`
	MaxGapMs   float64 `json:"max_gap_ms"`
	// TTFFMs is the time from the request to the first decodable frame; -1 if none arrived.
	TTFFMs float64 `json:"ttff_ms"`
	// Live says frames were still arriving at the time of the summary (the last one is no older
	// than the freeze gap).
	Live    bool   `json:"live"`
	Resyncs uint64 `json:"resyncs,omitempty"`
	// Audio timing (Timing): frames late by more than one period, inter-arrival gaps above two
	// periods, inter-arrival p50/p99 and lateness p99/max in ms (histogram bucket edges, 1 ms).
	LateFrames      uint64  `json:"late_frames,omitempty"`
	Gaps            uint64  `json:"gaps,omitempty"`
	InterarrivalP50 float64 `json:"interarrival_p50_ms,omitempty"`
	InterarrivalP99 float64 `json:"interarrival_p99_ms,omitempty"`
	LatenessP99     float64 `json:"lateness_p99_ms,omitempty"`
	LatenessMaxMs   float64 `json:"lateness_max_ms,omitempty"`
}

// Summarize returns the statistics as of time now. A stream whose last frame is older than the
// freeze gap counts that trailing gap as a freeze (media that stopped is frozen, not fine). Rates
// are averaged from the first packet to now.
func (s *Stream) Summarize(now time.Duration) Summary {
	out := Summary{Kind: s.cfg.Kind.String(), Packets: s.packets, Bytes: s.bytes, Frames: s.frames,
		Keyframes: s.keyframes, Freezes: s.freezes, Resyncs: s.resyncs, TTFFMs: -1}
	out.Expected = s.expPrior + s.expectedSinceResync()
	received := s.recPrior + s.received
	if out.Expected > received {
		out.Lost = out.Expected - received
	}
	if out.Expected > 0 {
		out.LossRatio = float64(out.Lost) / float64(out.Expected)
	}
	out.JitterMs = s.jitter / float64(s.cfg.ClockRate) * 1000
	freezeTime, maxGap := s.freezeTime, s.maxGap
	if s.decodable {
		out.TTFFMs = ms(s.firstFrame - s.start)
		out.Live = now-s.lastFrame <= s.cfg.FreezeGap
		if tail := now - s.lastFrame; tail > s.cfg.FreezeGap {
			out.Freezes++
			freezeTime += tail
			maxGap = max(maxGap, tail)
		}
		if span := now - s.firstFrame; span > 0 {
			out.FPS = float64(s.frames) / span.Seconds()
		}
	}
	if span := now - s.first; s.packets > 0 && span > 0 {
		out.KbitPerSec = float64(s.bytes) * 8 / span.Seconds() / 1000
	}
	out.FreezeMs, out.MaxGapMs = ms(freezeTime), ms(maxGap)
	if s.timing != nil && s.timing.counts.Frames > 1 {
		c := &s.timing.counts
		out.LateFrames, out.Gaps = c.Late, c.Gaps
		out.InterarrivalP50, out.InterarrivalP99 = c.Interarrival.QuantileMs(0.5), c.Interarrival.QuantileMs(0.99)
		out.LatenessP99, out.LatenessMaxMs = c.Lateness.QuantileMs(0.99), ms(s.timing.MaxLateness())
	}
	return out
}

// Timing returns an audio stream's timing totals (zero for video).
func (s *Stream) Timing() TimingCounts {
	if s.timing == nil {
		return TimingCounts{}
	}
	return s.timing.Counts()
}

// Counters are the running totals a sampler differentiates over time.
type Counters struct {
	Packets, Bytes, Expected, Lost uint64
	// Late and Gaps are an audio stream's late frames and long inter-arrival gaps (Timing).
	Late, Gaps uint64
}

// Counters returns the running totals, cheaply (no rates).
func (s *Stream) Counters() Counters {
	c := Counters{Packets: s.packets, Bytes: s.bytes, Expected: s.expPrior + s.expectedSinceResync()}
	if rec := s.recPrior + s.received; c.Expected > rec {
		c.Lost = c.Expected - rec
	}
	if s.timing != nil {
		c.Late, c.Gaps = s.timing.counts.Late, s.timing.counts.Gaps
	}
	return c
}

// Reception is what an RTCP reception report (RFC 3550 §6.4.1) says of the stream: the extended
// highest sequence number received, the packets expected and received so far (over every resync)
// and the interarrival jitter in RTP clock units.
type Reception struct {
	ExtHighest         uint32
	Expected, Received uint64
	Jitter             uint32
}

// Reception returns the stream's reception figures.
func (s *Stream) Reception() Reception {
	return Reception{ExtHighest: uint32(s.maxExt - 1<<16), Expected: s.expPrior + s.expectedSinceResync(),
		Received: s.recPrior + s.received, Jitter: uint32(s.jitter)}
}

// Decodable reports whether a first frame has been shown.
func (s *Stream) Decodable() bool { return s.decodable }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
