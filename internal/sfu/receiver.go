package sfu

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu/policy"
	"github.com/strata-rtc/strata/internal/udpbatch"
)

// ExtIDs are the header extension ids a peer negotiated for the extensions strata forwards or
// reads (0: not negotiated).
type ExtIDs struct {
	AudioLevel, DependencyDescriptor, VideoOrientation uint8
}

// Header extension URIs behind ExtIDs.
const (
	AudioLevelURI           = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
	DependencyDescriptorURI = "https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension"
	VideoOrientationURI     = "urn:3gpp:video-orientation"
)

// ExtIDsFrom picks the ids of the extensions strata knows out of a negotiated URI → id list.
func ExtIDsFrom(uris map[string]int) ExtIDs {
	id := func(uri string) uint8 {
		if v := uris[uri]; v > 0 && v < 256 {
			return uint8(v)
		}
		return 0
	}
	return ExtIDs{id(AudioLevelURI), id(DependencyDescriptorURI), id(VideoOrientationURI)}
}

// ReceiverConfig describes a published track.
type ReceiverConfig struct {
	// ID names the track in logs and stats (e.g. "feed/mid").
	ID    string
	Codec media.Codec
	// Simulcast: the layers are separate streams (RIDs or SSRCs), layer index = spatial layer.
	// Otherwise there is one stream whose spatial layers (SVC) are cumulative.
	Simulcast bool
	// Extensions are the publisher's header extension ids.
	Extensions ExtIDs
	// CacheSlots per layer for retransmissions (rounded up to a power of two).
	CacheSlots int
	// KeyframeInterval is the shortest time between two keyframe requests for one layer; the
	// actual gap is max(2 × RTT, KeyframeInterval).
	KeyframeInterval time.Duration
	// AudioLevelPackets: the audio level callback receives the average over this many packets.
	AudioLevelPackets int
	// Batcher groups the packets one publisher packet fans out into (one sendmmsg on a shared UDP
	// socket); nil writes them one by one.
	Batcher udpbatch.Batcher
}

// Packet bytes a receiver's cache keeps per slot (media.NewCache): browsers packetise video into
// packets of at most about 1200 bytes, and Opus at 32 kbit/s sends 120-byte packets (256 leaves
// room for 64 kbit/s stereo; a stream of larger packets keeps fewer of them, media.Cache). Slots of
// a full MTU each made an audio receiver's 64-slot cache 96 kB, most of a SIP call's memory.
const (
	videoCacheBytesPerSlot = 1200
	audioCacheBytesPerSlot = 256
)

// A simulcast layer's cache keeps twice as long as a retransmission is answered (maxResendAge),
// starting at simulcastCacheMinSlots and doubling up to CacheSlots: 64 slots hold 3 s of a
// 150 kbit/s layer, where 512 for every layer held 25 s of it (a third of the videoroom's memory).
const (
	simulcastCacheMinSlots = 64
	simulcastCacheHorizon  = 2 * maxResendAge
)

// KeyframeRequester sends a keyframe request (PLI) for a publisher's stream.
type KeyframeRequester func(layer int, ssrc uint32)

// ReceiverStats counts what a receiver saw.
type ReceiverStats struct {
	Packets, Bytes                      uint64
	MalformedRTP, MalformedPayload      uint64
	KeyframeRequests, KeyframesReceived uint64
	// Duplicates counts packets dropped because the layer had already received their sequence
	// number (e.g. Chromium's bandwidth probes, which resend recent packets over RTX).
	Duplicates uint64
	// Overlapping counts packets dropped because another goroutine was delivering a packet of
	// the same layer at the time (the contract is one writer per layer at a time).
	Overlapping uint64
	Sinks       int
}

// Receiver is one published track: it takes the publisher's packets (one goroutine per layer),
// parses each once, keeps it for retransmissions, measures the layers' rates, and hands it to
// every sink.
type Receiver struct {
	cfg       ReceiverConfig
	requestKF KeyframeRequester
	onLevel   atomic.Pointer[func(avgDBov float64)]
	batch     udpbatch.Batcher

	layers [policy.MaxSpatial]receiverLayer
	rtt    atomic.Int64

	sinksMu sync.Mutex // serialises changes of sinks; readers load the slice without it
	sinks   atomic.Pointer[[]Sink]
	muted   atomic.Bool

	packets, bytes, badRTP, badPayload atomic.Uint64
	duplicates, overlapping            atomic.Uint64
	kfRequests, keyframes              atomic.Uint64

	levelSum, levelCount atomic.Int64
	closed               atomic.Bool
	firstAt              atomic.Int64 // when the first packet arrived (+1, so 0 means none)

	replay replayState // keyframe replays to new sinks (replay.go)
}

// NewReceiver creates a receiver; requestKeyframe is called (rate-limited) when a keyframe is
// needed on a layer.
func NewReceiver(cfg ReceiverConfig, requestKeyframe KeyframeRequester) *Receiver {
	if cfg.CacheSlots <= 0 {
		cfg.CacheSlots = 512
		if !cfg.Codec.IsVideo() {
			cfg.CacheSlots = 64
		}
	}
	if cfg.KeyframeInterval <= 0 {
		cfg.KeyframeInterval = 300 * time.Millisecond
	}
	if cfg.AudioLevelPackets <= 0 {
		cfg.AudioLevelPackets = 100
	}
	r := &Receiver{cfg: cfg, requestKF: requestKeyframe, batch: cfg.Batcher}
	if r.batch == nil {
		r.batch = udpbatch.None
	}
	bytesPerSlot := videoCacheBytesPerSlot
	if !cfg.Codec.IsVideo() {
		bytesPerSlot = audioCacheBytesPerSlot
	}
	for i := range r.layers {
		// A cache allocates at its layer's first packet: a layer nobody sends (the upper layers of
		// one stream, a simulcast layer the publisher leaves out) costs nothing. A simulcast
		// layer's cache follows the layer's rate; a single stream's keeps CacheSlots packets, for
		// keyframe replays (replay.go) of however long a picture group.
		if cfg.Simulcast && cfg.Codec.IsVideo() {
			r.layers[i].cache = media.NewGrowingCache(simulcastCacheMinSlots, cfg.CacheSlots, bytesPerSlot, simulcastCacheHorizon)
		} else {
			r.layers[i].cache = media.NewCache(cfg.CacheSlots, bytesPerSlot)
		}
	}
	r.sinks.Store(&[]Sink{})
	return r
}

// Config returns the receiver's configuration.
func (r *Receiver) Config() ReceiverConfig { return r.cfg }

// Codec is the track's codec.
func (r *Receiver) Codec() media.Codec { return r.cfg.Codec }

// OnAudioLevel installs a callback receiving the average audio level (dBov, 0 loudest … 127
// silence) of every AudioLevelPackets packets, as Janus computes it (a float, compared with the
// room's threshold by the caller). Levels of a muted (moderated) stream are not counted. It is
// called on the media path: keep it short.
func (r *Receiver) OnAudioLevel(f func(avgDBov float64)) { r.onLevel.Store(&f) }

// SetRTT records the publisher's round-trip time (it stretches the keyframe request interval).
func (r *Receiver) SetRTT(rtt time.Duration) { r.rtt.Store(int64(rtt)) }

// WriteRTP takes one packet of a layer from the publisher. pkt is only read, and only during the
// call. Malformed packets are counted and dropped. The packets of one layer come from one
// goroutine at a time; a packet that arrives while another goroutine is delivering one of the same
// layer is dropped and counted (Overlapping), never raced: the layer's parser state, duplicate
// filter and the packet its sinks read belong to one writer.
func (r *Receiver) WriteRTP(layer int, pkt []byte, now time.Duration) {
	if layer < 0 || layer >= len(r.layers) || r.closed.Load() {
		return
	}
	l := &r.layers[layer]
	if !l.writing.CompareAndSwap(false, true) {
		r.overlapping.Add(1)
		return
	}
	r.writeRTP(l, layer, pkt, now)
	l.writing.Store(false)
}

// writeRTP is WriteRTP once the layer is held.
func (r *Receiver) writeRTP(l *receiverLayer, layer int, pkt []byte, now time.Duration) {
	h, ok := media.ParseRTP(pkt)
	if !ok {
		r.badRTP.Add(1)
		return
	}
	// A packet received twice must not be forwarded twice: the subscriber would drop the copy (SRTP
	// replay protection) before its transport-wide feedback, so strata's estimate would count the
	// copy as lost; and the rate meter would count it as media.
	w := l.writingState()
	if w.duplicate(&h) {
		r.duplicates.Add(1)
		return
	}
	f, ok := media.ParsePacket(r.cfg.Codec, pkt, &h, r.cfg.Extensions.DependencyDescriptor, &w.dd)
	if !ok {
		r.badPayload.Add(1)
		return
	}
	if !r.cfg.Codec.IsVideo() {
		r.readAudioLevel(pkt, &h)
	}
	l.arrived(h.SSRC, now)
	if r.firstAt.Load() == 0 {
		r.firstAt.CompareAndSwap(0, int64(now)+1)
	}
	r.packets.Add(1)
	r.bytes.Add(uint64(len(pkt)))
	l.cache.Store(h.Seq, pkt, now)
	spatial := layer
	if !r.cfg.Simulcast {
		spatial = max(int(f.SID), 0)
	}
	l.meter.add(now, spatial, int(f.TID), len(pkt))
	if f.Keyframe && f.Start {
		r.keyframeArrived(l, now)
	}
	if r.muted.Load() {
		return
	}
	if layer == 0 && !r.cfg.Simulcast {
		if f.Keyframe && f.Start {
			r.replay.noteKeyframe(&h)
		}
		if pending := r.replay.takePending(); pending != nil {
			r.replayTo(pending, &h, now)
		}
	}
	sinks := *r.sinks.Load()
	if len(sinks) == 0 {
		return
	}
	p := &l.pkt
	*p = Packet{Source: r, Layer: layer, Bytes: pkt, Header: h, Flags: f, At: now, out: &w.out}
	r.batch.Hold()
	for _, s := range sinks {
		s.WriteRTP(p)
	}
	r.batch.Release()
	p.Bytes = nil // the caller reuses its buffer
}

// SetMuted stops (or resumes) delivering to the sinks, as Janus stops relaying, forwarding and
// recording a stream a moderator muted; on resume the sinks re-anchor and a keyframe is
// requested.
func (r *Receiver) SetMuted(muted bool) {
	if r.muted.Swap(muted) == muted || muted {
		return
	}
	for _, s := range *r.sinks.Load() {
		s.Resync()
	}
	for i := range r.layers {
		if r.layers[i].active.Load() {
			r.RequestKeyframe(i, Now())
		}
	}
}

// AddSink starts delivering packets to s.
func (r *Receiver) AddSink(s Sink) {
	r.sinksMu.Lock()
	defer r.sinksMu.Unlock()
	old := *r.sinks.Load()
	next := append(append(make([]Sink, 0, len(old)+1), old...), s)
	r.sinks.Store(&next)
}

// RemoveSink stops delivering packets to s. A packet being delivered may still reach it.
func (r *Receiver) RemoveSink(s Sink) {
	r.replay.dropPending(s)
	r.sinksMu.Lock()
	defer r.sinksMu.Unlock()
	old := *r.sinks.Load()
	next := make([]Sink, 0, len(old))
	for _, x := range old {
		if x != s {
			next = append(next, x)
		}
	}
	r.sinks.Store(&next)
}

// Sinks returns the current sinks.
func (r *Receiver) Sinks() []Sink { return *r.sinks.Load() }

func (r *Receiver) readAudioLevel(pkt []byte, h *media.Header) {
	id := r.cfg.Extensions.AudioLevel
	if id == 0 || r.muted.Load() {
		return
	}
	if level, _, ok := media.AudioLevel(h.Extension(pkt, id)); ok {
		r.addLevel(int(level))
	}
}

func (r *Receiver) addLevel(level int) {
	sum := r.levelSum.Add(int64(level))
	n := r.levelCount.Add(1)
	if n < int64(r.cfg.AudioLevelPackets) {
		return
	}
	r.levelSum.Add(-sum)
	r.levelCount.Add(-n)
	if f := r.onLevel.Load(); f != nil && *f != nil {
		(*f)(float64(sum) / float64(n))
	}
}

// measureTime is how long a receiver must have received before its layer rates are trusted.
const measureTime = 500 * time.Millisecond

// Measured reports whether the layer rates cover enough time to allocate with.
func (r *Receiver) Measured(now time.Duration) bool {
	first := r.firstAt.Load()
	return first != 0 && now-time.Duration(first-1) >= measureTime
}

// Rates measures what forwarding each layer costs a subscriber. Each receiver layer meters what
// arrives on it, under its own lock; for SVC the one stream's meter holds every spatial layer.
func (r *Receiver) Rates(now time.Duration) policy.Rates {
	var raw policy.Rates
	var has [policy.MaxSpatial]bool
	for i := range r.layers {
		r.layers[i].meter.addRates(now, &raw, &has)
	}
	return cumulativeRates(&raw, &has, !r.cfg.Simulcast)
}

// Close stops delivery; later packets are ignored.
func (r *Receiver) Close() {
	r.closed.Store(true)
	r.sinksMu.Lock()
	r.sinks.Store(&[]Sink{})
	r.sinksMu.Unlock()
}

// Stats returns the counters.
func (r *Receiver) Stats() ReceiverStats {
	return ReceiverStats{
		Packets: r.packets.Load(), Bytes: r.bytes.Load(),
		MalformedRTP: r.badRTP.Load(), MalformedPayload: r.badPayload.Load(),
		KeyframeRequests: r.kfRequests.Load(), KeyframesReceived: r.keyframes.Load(),
		Duplicates: r.duplicates.Load(), Overlapping: r.overlapping.Load(), Sinks: len(*r.sinks.Load()),
	}
}
