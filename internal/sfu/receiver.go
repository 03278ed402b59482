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

// Tap receives a copy of every valid packet of a receiver (RTP forwarders). WriteRTP runs on the
// media path: it must not block and must not keep pkt.
type Tap interface {
	WriteRTP(layer int, pkt []byte)
}

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
	DownTracks int
}

// Receiver is one published track: it takes the publisher's packets (one goroutine per layer),
// and fans them out to the track's down-tracks.
type Receiver struct {
	cfg       ReceiverConfig
	requestKF KeyframeRequester
	onLevel   atomic.Pointer[func(avgDBov float64)]
	batch     udpbatch.Batcher

	layers [policy.MaxSpatial]receiverLayer
	meter  rateMeter
	rtt    atomic.Int64

	downMu sync.Mutex
	downs  atomic.Pointer[[]*DownTrack]
	taps   atomic.Pointer[[]Tap]
	muted  atomic.Bool

	packets, bytes, badRTP, badPayload atomic.Uint64
	duplicates                         atomic.Uint64
	kfRequests, keyframes              atomic.Uint64

	levelSum, levelCount atomic.Int64
	closed               atomic.Bool
	firstAt              atomic.Int64 // when the first packet arrived (+1, so 0 means none)
}

type receiverLayer struct {
	ssrc   atomic.Uint32
	active atomic.Bool
	lastAt atomic.Int64 // when the newest packet arrived
	cache  *media.Cache
	dd     media.DDParser // used only by this layer's read goroutine

	// seen holds, per slot, 1 + the newest sequence number received in it, for recognising
	// duplicates; seenSSRC is the stream it describes. Used only by this layer's read goroutine.
	seen     [seenSlots]uint32
	seenSSRC uint32

	kfMu        sync.Mutex
	kfRequested bool
	kfAt        time.Duration
	lastKF      atomic.Int64
}

// seenSlots is how many recent sequence numbers a layer remembers to recognise duplicates.
const seenSlots = 1024

// duplicate reports whether the layer already received this packet, and remembers it otherwise.
// A new SSRC (the publisher restarted the stream) forgets the old numbers.
func (l *receiverLayer) duplicate(h *media.Header) bool {
	if h.SSRC != l.seenSSRC {
		l.seen, l.seenSSRC = [seenSlots]uint32{}, h.SSRC
	}
	slot := &l.seen[h.Seq&(seenSlots-1)]
	if *slot == uint32(h.Seq)+1 {
		return true
	}
	*slot = uint32(h.Seq) + 1
	return false
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
	for i := range r.layers {
		r.layers[i].cache = media.NewCache(cfg.CacheSlots)
	}
	empty := []*DownTrack{}
	r.downs.Store(&empty)
	noTaps := []Tap{}
	r.taps.Store(&noTaps)
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

// SetLayerSSRC records the publisher's SSRC of a layer (for keyframe requests).
func (r *Receiver) SetLayerSSRC(layer int, ssrc uint32) {
	if layer >= 0 && layer < len(r.layers) {
		r.layers[layer].ssrc.Store(ssrc)
	}
}

// LayerSSRC returns the publisher's SSRC of a layer (0 when unknown).
func (r *Receiver) LayerSSRC(layer int) uint32 {
	if layer < 0 || layer >= len(r.layers) {
		return 0
	}
	return r.layers[layer].ssrc.Load()
}

// SetRTT records the publisher's round-trip time (it stretches the keyframe request interval).
func (r *Receiver) SetRTT(rtt time.Duration) { r.rtt.Store(int64(rtt)) }

// WriteRTP takes one packet of a layer from the publisher. pkt is only read, and only during the
// call. Malformed packets are counted and dropped.
func (r *Receiver) WriteRTP(layer int, pkt []byte, now time.Duration) {
	if layer < 0 || layer >= len(r.layers) || r.closed.Load() {
		return
	}
	h, ok := media.ParseRTP(pkt)
	if !ok {
		r.badRTP.Add(1)
		return
	}
	l := &r.layers[layer]
	// A packet received twice must not be forwarded twice: the subscriber would drop the copy (SRTP
	// replay protection) before its transport-wide feedback, so strata's estimate would count the
	// copy as lost; and the rate meter would count it as media.
	if l.duplicate(&h) {
		r.duplicates.Add(1)
		return
	}
	f, ok := r.parse(l, pkt, &h)
	if !ok {
		r.badPayload.Add(1)
		return
	}
	if l.ssrc.Load() == 0 {
		l.ssrc.Store(h.SSRC)
	}
	l.active.Store(true)
	l.lastAt.Store(int64(now))
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
	r.meter.add(now, spatial, int(f.TID), len(pkt))
	if f.Keyframe && f.Start {
		r.keyframeArrived(l, now)
	}
	for _, t := range *r.taps.Load() {
		t.WriteRTP(layer, pkt)
	}
	if r.muted.Load() {
		return
	}
	downs := *r.downs.Load()
	if len(downs) == 0 {
		return
	}
	r.batch.Hold()
	for _, d := range downs {
		d.writeRTP(r, layer, pkt, &h, &f, now)
	}
	r.batch.Release()
}

// SetMuted stops (or resumes) forwarding to down-tracks, e.g. when a moderator mutes the stream;
// on resume the down-tracks re-anchor their numbering and a keyframe is requested.
func (r *Receiver) SetMuted(muted bool) {
	if r.muted.Swap(muted) == muted || muted {
		return
	}
	for _, d := range *r.downs.Load() {
		d.resync()
	}
	for i := range r.layers {
		if r.layers[i].active.Load() {
			r.RequestKeyframe(i, Now())
		}
	}
}

// Muted reports whether forwarding is muted.
func (r *Receiver) Muted() bool { return r.muted.Load() }

// AddTap adds a tap; RemoveTap removes it.
func (r *Receiver) AddTap(t Tap) {
	r.downMu.Lock()
	defer r.downMu.Unlock()
	old := *r.taps.Load()
	next := append(append(make([]Tap, 0, len(old)+1), old...), t)
	r.taps.Store(&next)
}

// RemoveTap removes a tap added with AddTap.
func (r *Receiver) RemoveTap(t Tap) {
	r.downMu.Lock()
	defer r.downMu.Unlock()
	old := *r.taps.Load()
	next := make([]Tap, 0, len(old))
	for _, x := range old {
		if x != t {
			next = append(next, x)
		}
	}
	r.taps.Store(&next)
}

// parse reads the codec flags, with the Dependency Descriptor for AV1, and the audio level.
func (r *Receiver) parse(l *receiverLayer, pkt []byte, h *media.Header) (media.Flags, bool) {
	if !r.cfg.Codec.IsVideo() {
		if id := r.cfg.Extensions.AudioLevel; id != 0 {
			if level, _, ok := media.AudioLevel(h.Extension(pkt, id)); ok && !r.muted.Load() {
				r.addLevel(int(level))
			}
		}
		return media.NoLayers(), true
	}
	f, ok := media.ParsePayload(r.cfg.Codec, h.Payload(pkt))
	if !ok {
		return f, false
	}
	if r.cfg.Codec == media.CodecAV1 && r.cfg.Extensions.DependencyDescriptor != 0 {
		if ext := h.Extension(pkt, r.cfg.Extensions.DependencyDescriptor); ext != nil {
			if fr, ok := l.dd.Parse(ext); ok {
				fr.Flags(&f)
				return f, true
			}
		}
	}
	if r.cfg.Codec != media.CodecVP9 {
		f.End = h.Marker
	}
	return f, true
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

func (r *Receiver) keyframeArrived(l *receiverLayer, now time.Duration) {
	r.keyframes.Add(1)
	l.lastKF.Store(int64(now))
	l.kfMu.Lock()
	l.kfRequested = false
	l.kfMu.Unlock()
}

// RequestKeyframe asks the publisher for a keyframe on a layer, at most once per
// max(2 × RTT, KeyframeInterval) while none arrives. It reports whether a request went out.
func (r *Receiver) RequestKeyframe(layer int, now time.Duration) bool {
	if layer < 0 || layer >= len(r.layers) || !r.cfg.Codec.IsVideo() {
		return false
	}
	l := &r.layers[layer]
	gap := max(2*time.Duration(r.rtt.Load()), r.cfg.KeyframeInterval)
	l.kfMu.Lock()
	if l.kfRequested && now-l.kfAt < gap {
		l.kfMu.Unlock()
		return false
	}
	l.kfRequested, l.kfAt = true, now
	l.kfMu.Unlock()
	r.kfRequests.Add(1)
	if r.requestKF != nil {
		r.requestKF(layer, l.ssrc.Load())
	}
	return true
}

// LastKeyframe is when the last keyframe of a layer arrived (ok false if none did).
func (r *Receiver) LastKeyframe(layer int) (time.Duration, bool) {
	if layer < 0 || layer >= len(r.layers) {
		return 0, false
	}
	at := r.layers[layer].lastKF.Load()
	return time.Duration(at), at != 0
}

// layerFlowing reports whether a layer received a packet within layerStale of now.
func (r *Receiver) layerFlowing(layer int, now time.Duration) bool {
	if layer < 0 || layer >= len(r.layers) || !r.layers[layer].active.Load() {
		return false
	}
	return now-time.Duration(r.layers[layer].lastAt.Load()) < layerStale
}

// ActiveLayers is the number of layers that have received packets.
func (r *Receiver) ActiveLayers() int {
	n := 0
	for i := range r.layers {
		if r.layers[i].active.Load() {
			n++
		}
	}
	return n
}

// measureTime is how long a receiver must have received before its layer rates are trusted.
const measureTime = 500 * time.Millisecond

// Measured reports whether the layer rates cover enough time to allocate with.
func (r *Receiver) Measured(now time.Duration) bool {
	first := r.firstAt.Load()
	return first != 0 && now-time.Duration(first-1) >= measureTime
}

// Rates measures what forwarding each layer costs a subscriber.
func (r *Receiver) Rates(now time.Duration) policy.Rates {
	return r.meter.rates(now, !r.cfg.Simulcast)
}

// cached copies a cached packet of a layer into dst.
func (r *Receiver) cached(layer int, seq uint16, dst []byte) int {
	if layer < 0 || layer >= len(r.layers) {
		return 0
	}
	n, _ := r.layers[layer].cache.Get(seq, dst)
	return n
}

// AddDownTrack starts forwarding to d.
func (r *Receiver) AddDownTrack(d *DownTrack) {
	r.downMu.Lock()
	defer r.downMu.Unlock()
	old := *r.downs.Load()
	next := make([]*DownTrack, 0, len(old)+1)
	next = append(append(next, old...), d)
	r.downs.Store(&next)
}

// RemoveDownTrack stops forwarding to d.
func (r *Receiver) RemoveDownTrack(d *DownTrack) {
	r.downMu.Lock()
	defer r.downMu.Unlock()
	old := *r.downs.Load()
	next := make([]*DownTrack, 0, len(old))
	for _, x := range old {
		if x != d {
			next = append(next, x)
		}
	}
	r.downs.Store(&next)
}

// DownTracks returns the current down-tracks.
func (r *Receiver) DownTracks() []*DownTrack { return *r.downs.Load() }

// Close stops forwarding; later packets are ignored.
func (r *Receiver) Close() {
	r.closed.Store(true)
	r.downMu.Lock()
	empty := []*DownTrack{}
	r.downs.Store(&empty)
	noTaps := []Tap{}
	r.taps.Store(&noTaps)
	r.downMu.Unlock()
}

// Stats returns the counters.
func (r *Receiver) Stats() ReceiverStats {
	return ReceiverStats{
		Packets: r.packets.Load(), Bytes: r.bytes.Load(),
		MalformedRTP: r.badRTP.Load(), MalformedPayload: r.badPayload.Load(),
		KeyframeRequests: r.kfRequests.Load(), KeyframesReceived: r.keyframes.Load(),
		Duplicates: r.duplicates.Load(), DownTracks: len(*r.downs.Load()),
	}
}
