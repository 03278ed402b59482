package mjrplay

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// maxRTP is the longest packet a recording's frame holds (what the reader accepts).
const maxRTP = 1500

// track is one file being played: the reader, the one packet read ahead, and the renumbering.
// Only the playback goroutine touches it once the source is open.
type track struct {
	r      *record.MJRReader
	recv   *sfu.Receiver
	desc   source.Track
	info   record.MJRInfo
	clock  int64
	offset time.Duration // where the track starts on the recording's timeline

	buf     [maxRTP]byte
	n       int
	pending bool
	due     time.Duration // the pending packet's time on the timeline (offset included)

	// The timeline, in ticks of the codec's clock: the pending packet's position pos is
	// anchorPos plus how far its unwrapped timestamp ext is from anchorExt.
	started         bool
	inSSRC, lastTS  uint32
	ext, anchorExt  int64
	anchorPos, pos  int64
	seqOff, lastSeq uint16
	ssrc, tsBase    uint32
	shift           int64 // the pauses so far, in ticks
	redPT           uint8 // Opus RED's payload type in the recording, 0 without
	skippedAtOpen   uint64
	closed          bool
}

func newTrack(r *record.MJRReader, recv *sfu.Receiver, codec media.Codec) *track {
	t := &track{r: r, recv: recv, info: r.Info(), clock: int64(codec.ClockRate()), ssrc: random32(), tsBase: random32()}
	if red := t.info.OpusRED; red > 0 && red < 128 {
		t.redPT = uint8(red)
	}
	t.seqOff = uint16(random32())
	return t
}

// read reads the next packet into the buffer and places it on the timeline, skipping bad frames
// (counted in skipped). err is io.EOF at the end of the file, or why the file could not be read
// further.
func (t *track) read() (skipped uint64, err error) {
	for {
		f, err := t.r.Next()
		if errors.Is(err, record.ErrBadFrame) {
			skipped++
			continue
		}
		if err != nil {
			return skipped, err
		}
		if f.RTP[0]>>6 != 2 { // not RTP version 2: nothing a Receiver would take
			skipped++
			continue
		}
		t.n = copy(t.buf[:], f.RTP)
		t.place(f.At)
		t.pending = true
		return skipped, nil
	}
}

// advance reads the packet after the one just sent; at the end of the file the track ends. It
// returns how many frames it skipped (a file cut short counts one).
func (t *track) advance() uint64 {
	skipped, err := t.read()
	if err != nil {
		t.pending = false
		if err != io.EOF {
			skipped++
		}
	}
	return skipped
}

// place puts the packet in the buffer on the timeline, as Janus's player and janus-pp-rec do: by
// its (unwrapped) RTP timestamp. Two discontinuities re-anchor the timeline: a change of SSRC (the
// new stream's timestamps have nothing to do with the old one's), placed at the frame's recorded
// time in files that have one, and a timestamp step beyond maxJump, a broken stream that plays on
// at once rather than stall.
func (t *track) place(at time.Duration) {
	b := t.buf[:t.n]
	seq, ts, ssrc := binary.BigEndian.Uint16(b[2:]), binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:])
	switch {
	case !t.started:
		t.started, t.inSSRC = true, ssrc
		t.seqOff -= seq
		t.ext, t.anchorExt, t.anchorPos = int64(ts), int64(ts), durToTicks(at, t.clock)
	case ssrc != t.inSSRC:
		t.inSSRC = ssrc
		t.seqOff = t.lastSeq + 1 - seq
		t.ext = int64(ts)
		t.anchorExt, t.anchorPos = t.ext, t.pos
		if t.info.Version >= 2 {
			t.anchorPos = max(t.pos, durToTicks(at, t.clock))
		}
	default:
		t.ext += int64(int32(ts - t.lastTS))
		if next := t.anchorPos + t.ext - t.anchorExt; abs(next-t.pos) > maxJump*t.clock {
			t.anchorExt, t.anchorPos = t.ext, t.pos
		}
	}
	t.lastTS = ts
	t.pos = t.anchorPos + t.ext - t.anchorExt
	t.due = t.offset + ticksToDur(t.pos, t.clock)
}

// maxJump (seconds) is the largest timestamp step between two packets that is played as it is; a
// larger one is a broken stream.
const maxJump = 10

// send renumbers the pending packet onto the track's continuous stream and hands it to the
// Receiver.
func (t *track) send(now time.Duration) {
	b := t.buf[:t.n]
	seq := binary.BigEndian.Uint16(b[2:]) + t.seqOff
	t.lastSeq = seq
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint32(b[4:], t.tsBase+uint32(t.pos+t.shift))
	binary.BigEndian.PutUint32(b[8:], t.ssrc)
	if t.redPT != 0 && b[1]&0x7f == t.redPT {
		b = primaryOfRED(b)
	}
	t.recv.WriteRTP(0, b, now)
}

// shiftBy moves the rest of the track's timestamps by a pause of d.
func (t *track) shiftBy(d time.Duration) { t.shift += durToTicks(d, t.clock) }

func (t *track) close() {
	if t.closed {
		return
	}
	t.closed = true
	t.r.Close()
	t.recv.Close()
}

// primaryOfRED turns an Opus RED packet (RFC 2198) into a plain Opus one carrying its primary
// block, the last, in place: what Janus plays to a viewer that did not negotiate RED (strata's
// viewers never do). A malformed RED payload is left as it is (the viewer drops it).
func primaryOfRED(pkt []byte) []byte {
	h, ok := media.ParseRTP(pkt)
	if !ok {
		return pkt
	}
	payload := h.Payload(pkt)
	i, skip := 0, 0
	for i < len(payload) && payload[i]&0x80 != 0 { // redundant blocks: 4-byte headers
		if i+4 > len(payload) {
			return pkt
		}
		skip += int(binary.BigEndian.Uint16(payload[i+2:]) & 0x3ff)
		i += 4
	}
	if i >= len(payload) {
		return pkt
	}
	pt := payload[i] & 0x7f
	start := i + 1 + skip
	if start > len(payload) {
		return pkt
	}
	head := len(pkt) - len(payload)
	n := copy(pkt[head:], payload[start:])
	pkt[1] = pkt[1]&0x80 | pt
	return pkt[:head+n]
}

func durToTicks(d time.Duration, clock int64) int64 {
	return int64(d/time.Second)*clock + int64(d%time.Second)*clock/int64(time.Second)
}

func ticksToDur(ticks, clock int64) time.Duration {
	return time.Duration(ticks/clock)*time.Second + time.Duration(ticks%clock)*time.Second/time.Duration(clock)
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func random32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:]) | 1
}
