package sfu

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/ring"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// A down-track that answers NACKs (RespondNACK, and the subscriber negotiated them for the codec:
// browsers do for video, not for audio) remembers the packets it forwarded for as long as it would
// retransmit them (maxResendAge), in a window that starts at historyMinLen entries (2.5 kB: 0.6 s
// of a 150 kbit/s video layer) and doubles to the stream's packet rate, up to historyMaxLen (1 s
// at 1024 packets/s, about 10 Mbit/s of video). A history of the largest size for every
// down-track was 40 kB each, most of a subscriber's memory in an audio conference.
const (
	historyMinLen = 64
	historyMaxLen = 1024
)

// DownTrackConfig describes one forwarded track.
type DownTrackConfig struct {
	// ID and StreamID are the track id and msid stream id the subscriber sees.
	ID, StreamID string
	// Codec is what the track is offered as (the publisher's negotiated codec).
	Codec webrtc.RTPCodecCapability
	// RespondNACK makes the down-track answer the subscriber's NACKs from the receiver's cache
	// (over RTX when negotiated). Leave it off when the PeerConnection already runs Pion's NACK
	// responder, or packets would be sent twice.
	RespondNACK bool
	// Events is a second format the receiver's stream carries beside Codec (RFC 4733
	// telephone-event, which shares the audio's SSRC and sequence): its packets, payload type
	// EventsPT, go out with the subscriber's payload type for Events, or are dropped when the
	// subscriber did not negotiate it. Nil: every packet goes out as Codec.
	Events   *webrtc.RTPCodecCapability
	EventsPT uint8
	// OnLayerChange is called (on its own goroutine) when the forwarded layer changes.
	OnLayerChange func(current Layer)
	// Marker, when set, is told the DSCP of every packet sent (SetMarks; 0 until then), so that
	// the socket marks it: udpbatch.Marks of the PeerConnection's shared UDP socket.
	Marker Marker
}

// DownTrackStats counts what a down-track did.
type DownTrackStats struct {
	Packets, Bytes               uint64
	Dropped                      uint64 // layers above the target
	Switches                     uint64
	KeyframeRequests             uint64 // PLI/FIR from the subscriber
	NACKed, Retransmitted        uint64
	PaddingPackets, PaddingBytes uint64
	FractionLost                 float64 // newest receiver report
	Current, Target              Layer
}

// DownTrack forwards one published track to one subscriber: a Sink of the track's Receiver and a
// webrtc.TrackLocal of the subscriber's PeerConnection. Add it to the PeerConnection, then call
// Start.
//
// Its lock covers what must be decided in packet order — layer selection, the rewriter, the
// history of what was sent — and not the write through Pion, which runs on the writer's own
// buffer (the receiver layer's for media, the down-track's own for retransmissions and padding).
type DownTrack struct {
	cfg   DownTrackConfig
	codec media.Codec
	video bool

	mu         sync.Mutex // guards what follows
	recv       *Receiver
	bound      bool
	dst        destination
	sel        selector
	rw         media.Rewriter
	paused     bool
	resume     bool
	lastMarker bool                      // the last packet forwarded ended a frame (padding may follow it)
	history    ring.Window[historyEntry] // empty unless dst.nack
	rtxSeq     uint16
	current    Layer
	marks      LayerMarks // DSCP per layer (SetMarks)
	enforced   bool       // a switch thins the stream: forward every layer up to ceiling
	ceiling    Layer

	// ownMu serialises retransmissions and padding, which send from own (allocated at the first
	// of them: most audio down-tracks never send either, and the buffers are 3 kB).
	ownMu sync.Mutex
	own   *ownBuffers

	packets, bytes, dropped, switches atomic.Uint64
	kfRequests, nacked, retransmitted atomic.Uint64
	padPackets, padBytes              atomic.Uint64
	lossMu                            sync.Mutex
	lossSum                           float64
	lossReports                       int
	lastLoss                          float64
}

// ownBuffers are what a down-track's retransmissions and padding are built in.
type ownBuffers struct {
	send sendBuffer
	raw  [media.SlotSize]byte // a packet read back from the receiver's cache
}

// ownBuffers returns the down-track's own buffers, allocating them the first time; ownMu is held.
func (d *DownTrack) ownBuffers() *ownBuffers {
	if d.own == nil {
		d.own = new(ownBuffers)
	}
	return d.own
}

// historyEntry remembers how one output packet was made, when it was sent, and how often again.
type historyEntry struct {
	valid    bool
	marker   bool
	layer    int8
	tid      int8  // the packet's temporal layer, as packetLayer gives it
	sid      int8  // and its spatial layer
	dscp     uint8 // its mark
	resends  uint8
	sentAt   time.Duration
	resentAt time.Duration
	m        media.Mapping
}

// Stamp places an entry in the history's window, by output sequence number.
func (e historyEntry) Stamp() (uint32, time.Duration, bool) {
	return uint32(e.m.OutSeq), e.sentAt, e.valid
}

// NewDownTrack creates a down-track of recv. It is not forwarding until it is bound to a
// PeerConnection (AddTrack and negotiation) and added to the receiver with Start.
func NewDownTrack(recv *Receiver, cfg DownTrackConfig) *DownTrack {
	c := recv.Codec()
	d := &DownTrack{cfg: cfg, recv: recv, codec: c, video: c.IsVideo(), sel: newSelector(recv)}
	d.current = policy.NoLayer
	d.rw.Init(c.ClockRate())
	return d
}

// Receiver returns the track this down-track forwards.
func (d *DownTrack) Receiver() *Receiver {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.recv
}

// Start begins forwarding (the receiver delivers its packets to d).
func (d *DownTrack) Start() { d.Receiver().AddSink(d) }

// Stop ends forwarding.
func (d *DownTrack) Stop() { d.Receiver().RemoveSink(d) }

// SetReceiver re-points the down-track to another published track with the same codec (Janus's
// switch): the subscriber keeps its m-line and sees one continuous stream, starting at the new
// source's next keyframe.
func (d *DownTrack) SetReceiver(r *Receiver) error {
	if r.Codec() != d.codec {
		return errors.New("sfu: switching to a track with another codec")
	}
	d.mu.Lock()
	old := d.recv
	target := d.sel.target()
	d.recv = r
	d.sel = newSelector(r)
	d.sel.setTarget(target)
	d.sel.forwardAll(d.enforced, d.ceiling)
	d.resume = true
	d.current = policy.NoLayer
	d.dst.mapExtensions(r.cfg.Extensions)
	d.history.Reset() // sequence numbers of the old source mean nothing in the new one's cache
	d.mu.Unlock()
	old.RemoveSink(d)
	r.AddSink(d)
	r.RequestKeyframe(0, Now())
	return nil
}

// Resync implements Sink: the source was muted and is back; forwarding starts again (at a
// keyframe for video) with the numbering continuous.
func (d *DownTrack) Resync() {
	d.mu.Lock()
	d.restart()
	d.mu.Unlock()
}

// newSelector picks how packets of recv are selected: audio passes; a codec without SVC, or any
// codec sent as simulcast, is selected stream by stream; an SVC stream layer by layer.
func newSelector(recv *Receiver) selector {
	switch c := recv.Codec(); {
	case !c.IsVideo():
		return &passSelector{want: Layer{}}
	case recv.Config().Simulcast || !c.SVC():
		return newSimulcastSelector(recv.layerFlowing)
	default:
		return newSVCSelector()
	}
}

// SetTarget sets the layer the down-track should forward (the allocator's decision). NoLayer
// stops forwarding (the allocator pauses a video the path cannot carry); forwarding resumes, at a
// keyframe and with the numbering re-anchored, once a layer is set again. A new target that needs
// a keyframe of another simulcast layer asks for it at once, as Janus does.
func (d *DownTrack) SetTarget(l Layer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l == d.sel.target() {
		return
	}
	defer func() {
		if now := Now(); d.bound && !d.paused {
			if layer := d.sel.keyframeNeeded(now); layer >= 0 {
				d.recv.RequestKeyframe(layer, now)
			}
		}
	}()
	if l.Spatial < 0 && d.sel.target().Spatial >= 0 {
		// Forwarding resumes at a keyframe when a layer is set again, and the rewriter continues
		// the numbering from the last packet sent rather than leaving a hole the size of the pause.
		d.restart()
	}
	d.sel.setTarget(l)
}

// restart makes the stream start again after a gap (a pause, a mute, no layer): the rewriter
// re-anchors the numbering at the next forwarded packet, and a video waits for (and asks for) a
// keyframe with a fresh selector, since the subscriber missed the pictures meanwhile. Called with
// mu held.
func (d *DownTrack) restart() {
	d.resume = true
	if !d.video {
		return
	}
	target := d.sel.target()
	d.sel = newSelector(d.recv)
	d.sel.setTarget(target)
	d.sel.forwardAll(d.enforced, d.ceiling)
	d.current = policy.NoLayer
}

// Target returns the layer the down-track should forward.
func (d *DownTrack) Target() Layer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sel.target()
}

// Current returns the layer being forwarded (NoLayer before the first keyframe).
func (d *DownTrack) Current() Layer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.current
}

// SetPaused stops (or resumes) forwarding without renegotiation (Janus's pause/start, the
// echotest's audio/video switches).
func (d *DownTrack) SetPaused(paused bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paused && !paused {
		d.restart()
	}
	d.paused = paused
}

// SSRC is the SSRC the subscriber receives the track on (0 before negotiation).
func (d *DownTrack) SSRC() uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dst.ssrc
}

// layerChanged records a switch and tells the owner (without blocking the media path).
func (d *DownTrack) layerChanged() {
	cur := d.sel.current()
	if cur == d.current {
		return
	}
	countSwitch(d.current, cur)
	d.current = cur
	d.switches.Add(1)
	if cb := d.cfg.OnLayerChange; cb != nil {
		go cb(cur)
	}
}

// Stats returns the counters.
func (d *DownTrack) Stats() DownTrackStats {
	d.lossMu.Lock()
	loss := d.lastLoss
	d.lossMu.Unlock()
	d.mu.Lock()
	cur, target := d.current, d.sel.target()
	d.mu.Unlock()
	return DownTrackStats{
		Packets: d.packets.Load(), Bytes: d.bytes.Load(), Dropped: d.dropped.Load(), Switches: d.switches.Load(),
		KeyframeRequests: d.kfRequests.Load(), NACKed: d.nacked.Load(), Retransmitted: d.retransmitted.Load(),
		PaddingPackets: d.padPackets.Load(), PaddingBytes: d.padBytes.Load(), FractionLost: loss,
		Current: cur, Target: target,
	}
}
