package mediasrc

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
)

// Writer takes RTP packets; *webrtc.TrackLocalStaticRTP is one. The packet and its payload are
// only valid during the call.
type Writer interface {
	WriteRTP(*rtp.Packet) error
}

// keyframeHoldoff limits how often a keyframe request makes a layer skip ahead, as encoders rate
// limit PLI responses; a burst of subscribers joining must not turn the stream into keyframes.
const keyframeHoldoff = 500 * time.Millisecond

// audioInterval is the duration of an Opus packet, the clip's and the sources'.
const audioInterval = opusFrameDur * time.Millisecond

// lateSkip is how far behind schedule the pacer may fall before it skips frames instead of
// bursting them out (a stalled generator would otherwise flood the server afterwards).
const lateSkip = 500 * time.Millisecond

type videoState struct {
	w         Writer
	ext       []rtp.Extension // header extensions every packet of the layer carries
	clip      *VideoClip
	seq       uint16
	idx       int
	pictureID uint16
	tl0PicIdx uint8 // of the last TL0 frame (temporal-layered clips)
	keyWanted atomic.Bool
	lastJump  time.Duration
	jumped    bool
}

// Pacer sends a publisher's media in real time. Step is called from one goroutine; the counters
// and RequestKeyframe may be used from any.
type Pacer struct {
	audio     Writer
	audioClip *AudioClip
	voice     AudioSource
	levelExt  *levelExtensions // nil: no audio level extension
	audioSeq  uint16
	audioTS   uint32
	audioIdx  int
	audioNext time.Duration

	video     []*videoState
	videoTS   uint32
	videoNext time.Duration
	interval  time.Duration

	pkt rtp.Packet
	buf [MaxPayload]byte

	packets atomic.Uint64
	bytes   atomic.Uint64
	late    atomic.Uint64
	errors  atomic.Uint64
}

// NewPacer sends m: audio to audio (nil to send none) and video layer i to video[i] (fewer
// writers than layers sends only the first layers). The first packets are due at start.
func NewPacer(m *Media, audio Writer, video []Writer, start time.Duration) *Pacer {
	p := &Pacer{audio: audio, audioClip: m.Audio, audioNext: start, videoNext: start,
		audioSeq: uint16(rand.Uint32()), audioTS: rand.Uint32(), videoTS: rand.Uint32()}
	p.pkt.Version = 2
	for i, w := range video {
		if i >= len(m.Video) {
			break
		}
		p.video = append(p.video, &videoState{w: w, clip: m.Video[i], seq: uint16(rand.Uint32()),
			pictureID: uint16(rand.Uint32()) & 0x7fff, tl0PicIdx: uint8(rand.Uint32())})
		p.interval = m.Video[i].Interval
	}
	return p
}

// Begin makes the first packets due at start (call it before the first Step when the media should
// start later than the time given to NewPacer, for instance once the connection is up).
func (p *Pacer) Begin(start time.Duration) {
	p.audioNext, p.videoNext = start, start
}

// SetVideoExtensions sets header extensions (one-byte form) that every packet of layer i carries,
// such as the mid and rid a browser puts on simulcast packets so the receiver can tell the
// layers apart. Call it before the first Step; the slice is never modified.
func (p *Pacer) SetVideoExtensions(layer int, ext []rtp.Extension) {
	if layer >= 0 && layer < len(p.video) {
		p.video[layer].ext = ext[:len(ext):len(ext)] // an interceptor appending must copy
	}
}

// RequestKeyframe asks layer i (in the order given to NewPacer) for a keyframe; out-of-range
// layers are ignored.
func (p *Pacer) RequestKeyframe(layer int) {
	if layer >= 0 && layer < len(p.video) {
		p.video[layer].keyWanted.Store(true)
	}
}

// AudioSource produces a live audio stream frame by frame (instead of looping the Opus clip):
// each call returns the next 20 ms payload and its RFC 6464 audio level byte (V, then -dBov).
type AudioSource interface {
	Next() (payload []byte, level byte)
}

// SetAudioSource makes the pacer send src's frames, one every 20 ms, each carrying its audio
// level in the header extension levelID (RFC 6464; 0 sends no extension, as when the answer did
// not negotiate it). Call it before the first Step.
func (p *Pacer) SetAudioSource(src AudioSource, levelID uint8) {
	p.voice = src
	p.levelExt = nil
	if levelID > 0 {
		p.levelExt = levelTable(levelID)
	}
}

func (p *Pacer) sendsAudio() bool { return p.audio != nil && (p.voice != nil || p.audioClip != nil) }

// Step sends everything due at now and returns when the next packet is due.
func (p *Pacer) Step(now time.Duration) time.Duration {
	if p.sendsAudio() {
		p.audioNext = p.catchUp(p.audioNext, now)
		for p.audioNext <= now {
			p.sendAudio()
			p.audioNext += audioInterval
		}
	}
	if len(p.video) > 0 {
		p.videoNext = p.catchUp(p.videoNext, now)
		for p.videoNext <= now {
			p.sendVideoFrame(now)
			p.videoNext += p.interval
		}
	}
	next := now + time.Second
	if p.sendsAudio() {
		next = min(next, p.audioNext)
	}
	if len(p.video) > 0 {
		next = min(next, p.videoNext)
	}
	return next
}

// catchUp moves a deadline that fell far behind to now, and counts it.
func (p *Pacer) catchUp(due, now time.Duration) time.Duration {
	if now-due > lateSkip {
		p.late.Add(1)
		return now
	}
	return due
}

func (p *Pacer) sendAudio() {
	var payload []byte
	var ext []rtp.Extension
	if p.voice != nil {
		var level byte
		payload, level = p.voice.Next()
		if p.levelExt != nil {
			ext = p.levelExt[level]
		}
	} else {
		payload = p.audioClip.Packets[p.audioIdx]
		p.audioIdx = (p.audioIdx + 1) % len(p.audioClip.Packets)
	}
	p.pkt.Marker = false
	p.setExtensions(ext)
	p.pkt.SequenceNumber = p.audioSeq
	p.pkt.Timestamp = p.audioTS
	p.pkt.Payload = payload
	p.write(p.audio)
	p.audioSeq++
	p.audioTS += uint32(audioInterval * 48000 / time.Second)
}

func (p *Pacer) sendVideoFrame(now time.Duration) {
	for _, v := range p.video {
		if v.keyWanted.Load() && (!v.jumped || now-v.lastJump >= keyframeHoldoff) {
			v.keyWanted.Store(false)
			if !v.clip.Frames[v.idx].Key {
				v.idx = v.clip.NextKey(v.idx)
				v.lastJump, v.jumped = now, true
			}
		}
		frame := v.clip.Frames[v.idx]
		v.idx = (v.idx + 1) % len(v.clip.Frames)
		if frame.TID > v.clip.TopTID {
			continue // a layer this sender does not offer: nothing sent, no picture id used
		}
		p.setExtensions(v.ext)
		var desc [vp8TemporalDescriptorLen]byte
		n := descriptor(&desc, v, &frame)
		for i, chunk := range frame.Chunks {
			copy(p.buf[:n], desc[:n]) // every packet anew: a writer may have changed the buffer
			if i == 0 {
				p.buf[0] |= 0x10 // S: the first packet of the frame (partition 0)
			}
			m := copy(p.buf[n:], chunk)
			p.pkt.Marker = i == len(frame.Chunks)-1
			p.pkt.SequenceNumber = v.seq
			p.pkt.Timestamp = p.videoTS
			p.pkt.Payload = p.buf[:n+m]
			p.write(v.w)
			v.seq++
		}
		v.pictureID = (v.pictureID + 1) & 0x7fff
	}
	p.videoTS += uint32(p.interval * 90000 / time.Second)
}

// descriptor writes the RFC 7741 payload descriptor of a frame's packets (S clear) into b and
// returns its length: X; I with a 15-bit picture id (M set), continuous across the clip's loops; for a
// temporal-layered clip also L and T: TL0PICIDX (the index of the base frame the frame belongs
// to, counted up at each TL0 frame) and TID with Y, and N on the frames of the top layer sent
// above the base (TL2; TL1 when TL2 is not sent: only TL2 references it), which no frame sent
// references.
func descriptor(b *[vp8TemporalDescriptorLen]byte, v *videoState, f *Frame) int {
	b[0], b[1] = 0x80, 0x80
	b[2] = 0x80 | byte(v.pictureID>>8)
	b[3] = byte(v.pictureID)
	if !v.clip.Temporal {
		return vp8DescriptorLen
	}
	if f.TID == 0 {
		v.tl0PicIdx++
	}
	if f.TID == v.clip.TopTID && f.TID > 0 {
		b[0] |= 0x20
	}
	b[1] |= 0x60
	b[4] = v.tl0PicIdx
	b[5] = byte(f.TID) << 6
	if f.Sync {
		b[5] |= 0x20
	}
	return vp8TemporalDescriptorLen
}

func (p *Pacer) setExtensions(ext []rtp.Extension) {
	p.pkt.Extension = len(ext) > 0
	p.pkt.ExtensionProfile = 0
	if p.pkt.Extension {
		p.pkt.ExtensionProfile = 0xBEDE
	}
	p.pkt.Extensions = ext
}

func (p *Pacer) write(w Writer) {
	if err := w.WriteRTP(&p.pkt); err != nil {
		p.errors.Add(1)
		return
	}
	p.packets.Add(1)
	p.bytes.Add(uint64(p.pkt.MarshalSize()))
}

// PacerStats are a pacer's running totals.
type PacerStats struct {
	Packets, Bytes uint64 // RTP packets written and their size (header, extensions, payload)
	Late           uint64 // times the pacer fell behind by more than 500 ms and skipped ahead
	Errors         uint64 // failed writes
}

// Stats returns the running totals.
func (p *Pacer) Stats() PacerStats {
	return PacerStats{Packets: p.packets.Load(), Bytes: p.bytes.Load(), Late: p.late.Load(), Errors: p.errors.Load()}
}
