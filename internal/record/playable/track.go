package playable

import (
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
)

// TrackStats counts what happened to one track.
type TrackStats struct {
	Codec media.Codec
	// Packets were taken in; Frames written to the file (silence included).
	Packets, Frames int
	// Dropped packets were malformed, too late to be put in order, repeated, or not depacketized.
	Dropped int
	// Gaps are the places where packets were missing (or the stream restarted).
	Gaps int
	// KeyframeWaits counts the times video waited for a keyframe (the start, and after each
	// gap); Skipped the frames dropped while waiting, or lost to a gap inside them.
	KeyframeWaits, Skipped int
	// Silence counts the 20 ms Opus frames that filled gaps.
	Silence int
	// Start is where the track starts in the file; Duration how long it lasts.
	Start, Duration time.Duration
}

// frame is one frame ready for the file, on the file's clock.
type frame struct {
	pts  time.Duration
	data []byte
	key  bool
}

// track is one track of a Writer: its window, its depacketizer, its clock.
type track struct {
	codec media.Codec
	fmtp  string
	clock int64
	st    TrackStats
	win   reorder
	dep   depacketizer
	video videoParams // what the keyframes said (size, parameter sets)

	// The frame being assembled: its timestamp, bytes, and whether it is usable.
	cur      []byte
	curTS    uint32
	curAt    time.Duration
	curOpen  bool
	curBroke bool
	waitKey  bool // video: skip frames until a keyframe

	ssrc      uint32
	ssrcKnown bool

	// The clock: ts0 (extended) arrived at at0 on the file's clock; tsExt extends timestamps.
	anchored bool
	ts0      int64
	at0      time.Duration
	tsHigh   int64
	lastPTS  time.Duration
	nextPTS  time.Duration // audio: where the last frame ends
	wrote    bool

	lent    [][]byte // the window's buffers of the frame's packets, given back when it ends
	queue   []frame  // frames waiting to be interleaved
	seen    bool     // a frame reached the queue (for video: a keyframe)
	leftOut bool     // the file was started without this track
}

// excluded says the track's frames have no place in the file.
func (t *track) excluded() bool { return t.leftOut }

// end is where the track ends: its last frame's end (for video, one frame interval after the
// last frame's start).
func (t *track) end() time.Duration {
	if !t.codec.IsVideo() {
		return t.nextPTS
	}
	if t.st.Frames > 1 {
		return t.lastPTS + (t.lastPTS-t.st.Start)/time.Duration(t.st.Frames-1)
	}
	return t.lastPTS
}

func newTrack(c media.Codec, fmtp string) *track {
	t := &track{codec: c, fmtp: fmtp, clock: int64(c.ClockRate()), waitKey: c.IsVideo()}
	t.st.Codec = c
	if t.waitKey {
		t.st.KeyframeWaits = 1
	}
	t.dep = newDepacketizer(c)
	return t
}

// packet takes one packet that arrived at (on the file's clock); now is the latest arrival.
func (t *track) packet(b []byte, at, now time.Duration, out func(*track, frame)) {
	t.st.Packets++
	var h rtp.Header
	n, err := h.Unmarshal(b)
	if err != nil || n >= len(b) || h.PayloadType >= 64 && h.PayloadType <= 95 {
		t.st.Dropped++
		return
	}
	if t.ssrcKnown && h.SSRC != t.ssrc {
		t.restart(now, out)
	}
	t.ssrc, t.ssrcKnown = h.SSRC, true
	if !t.win.add(h.SequenceNumber, b, at) {
		t.st.Dropped++
	}
	t.release(now, false, out)
}

// release hands the window's due packets (all of them when flush) to the depacketizer.
func (t *track) release(now time.Duration, flush bool, out func(*track, frame)) {
	for len(t.win.held) > 0 && (flush || t.win.ready(now)) {
		p, gap := t.win.pop()
		t.lent = append(t.lent, p.b)
		t.ordered(p.b, p.at, gap, out)
		if !t.curOpen {
			t.win.recycle(t.lent)
			t.lent = t.lent[:0]
		}
	}
}

// restart begins a new stream on the same track (a new SSRC, a resumed stream): what is held is
// written, and the next packet is a gap and a new anchor for the clock.
func (t *track) restart(now time.Duration, out func(*track, frame)) {
	t.release(now, true, out)
	t.finish(out)
	t.win.restart()
	t.win.emitted = false
	t.anchored = false
	t.gap()
}

// gap notes missing packets: a video frame they touch is lost, and so is what follows until a
// keyframe.
func (t *track) gap() {
	t.st.Gaps++
	if t.codec.IsVideo() {
		if t.curOpen {
			t.curBroke = true
		}
		t.awaitKey()
		t.dep.reset()
	}
}

// ordered takes the next packet in sequence order.
func (t *track) ordered(b []byte, at time.Duration, gap bool, out func(*track, frame)) {
	var p rtp.Packet
	if err := p.Unmarshal(b); err != nil {
		t.st.Dropped++
		return
	}
	if gap {
		t.gap()
	}
	if len(p.Payload) == 0 {
		return // padding (a bandwidth probe): in the numbering, no media
	}
	if !t.codec.IsVideo() {
		t.audio(&p, at, out)
		return
	}
	if t.curOpen && p.Timestamp != t.curTS {
		t.finish(out)
	}
	if !t.curOpen {
		t.curOpen, t.curTS, t.curAt, t.curBroke = true, p.Timestamp, at, false
		t.cur = t.cur[:0]
		if gap {
			// The packets lost may have been this frame's first ones.
			f, ok := media.ParsePayload(t.codec, p.Payload)
			t.curBroke = !ok || !f.Start
		}
	}
	if t.curBroke {
		return
	}
	var err error
	if t.cur, err = t.dep.add(t.cur, p.Payload); err != nil {
		t.st.Dropped++
		t.curBroke = true
		t.dep.reset()
		return
	}
	if p.Marker {
		t.finish(out)
	}
}

// finish ends the frame being assembled: it goes out unless it is broken or a keyframe is awaited.
func (t *track) finish(out func(*track, frame)) {
	if !t.curOpen {
		return
	}
	t.curOpen = false
	broke := t.curBroke
	t.curBroke = false
	if len(t.cur) == 0 && !broke {
		return
	}
	data, err := t.dep.frame(t.cur)
	if broke || err != nil {
		t.skip()
		return
	}
	key := t.video.keyframe(t.codec, data)
	if t.waitKey && !key {
		t.skip()
		return
	}
	t.waitKey = false
	t.emit(t.pts(t.curTS, t.curAt), data, key, out)
}

// skip counts a video frame not written, and a wait for a keyframe when it starts one.
func (t *track) skip() {
	t.st.Skipped++
	t.awaitKey()
}

// awaitKey makes video wait for a keyframe.
func (t *track) awaitKey() {
	if !t.waitKey {
		t.waitKey = true
		t.st.KeyframeWaits++
	}
}

// emit hands out a frame at pts on the file's clock (a copy of data: buffers are reused).
func (t *track) emit(pts time.Duration, data []byte, key bool, out func(*track, frame)) {
	pts = max(pts, 0)
	if t.wrote && pts < t.lastPTS {
		pts = t.lastPTS // a timestamp going back (a corrupt packet): keep the track monotonic
	}
	if !t.wrote {
		t.st.Start = pts
	}
	t.wrote, t.lastPTS = true, pts
	t.st.Frames++
	out(t, frame{pts: pts, data: append([]byte(nil), data...), key: key})
}

// pts maps an RTP timestamp onto the file's clock: the first one after an anchor is when it
// arrived, the next ones follow the timestamps.
func (t *track) pts(ts uint32, at time.Duration) time.Duration {
	if !t.anchored {
		t.anchored, t.ts0, t.tsHigh = true, int64(ts), int64(ts)
		t.at0 = at
		if t.wrote && t.at0 < t.lastPTS {
			t.at0 = t.lastPTS
		}
	}
	e := t.tsHigh + int64(int32(ts-uint32(t.tsHigh)))
	t.tsHigh = max(t.tsHigh, e)
	return t.at0 + time.Duration((e-t.ts0)*int64(time.Second)/t.clock)
}

// close writes what the window and the frame being assembled still hold.
func (t *track) close(now time.Duration, out func(*track, frame)) {
	t.release(now, true, out)
	t.finish(out)
}
