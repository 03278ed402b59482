// Package convert turns .mjr recordings into files ordinary players read, as Janus's janus-pp-rec
// does: the packets are put back in order by sequence number, depacketized into the container, and
// a gap in the stream becomes silence, so that the file's timeline is the recording's. Nothing is
// transcoded. For now it writes Ogg/Opus (.opus, .ogg) from Opus recordings.
package convert

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4/pkg/media/oggwriter"

	"github.com/strata-rtc/strata/internal/record"
)

// Window is how many packets the conversion holds to put them back in order: a packet that comes
// later than this many packets after its place is dropped (counted). Recordings are written in
// arrival order, and at 20 ms a packet 64 places late is over a second late.
const Window = 64

// rate is Opus's RTP clock, and the granule rate of Ogg/Opus.
const rate = 48000

// silenceSamples is the length of the silence frame a gap is filled with.
const silenceSamples = rate / 50

// opusSilence is a 20 ms mono CELT frame of silence, the frame janus-pp-rec fills gaps with.
var opusSilence = []byte{0xf8, 0xff, 0xfe}

// maxFill bounds the silence one gap becomes: a longer jump in the timestamps (a corrupt packet,
// not a pause anyone recorded) is left as a jump, rather than hours of silence written out.
const maxFill = time.Hour

// Stats says what a conversion did.
type Stats struct {
	// Packets were written; Silence frames of 20 ms filled gaps; Dropped packets came too late to
	// be put in order, twice, from another SSRC than the first, or were not Opus.
	Packets, Silence, Dropped int
	// Cut says the recording ended inside a packet (its recorder was stopped by a crash); what
	// came before was converted.
	Cut bool
	// Duration is the converted file's.
	Duration time.Duration
}

// File converts the recording in to the file out, whose extension says the format: .opus or .ogg.
// A recording that is not Opus, or holds no packets, is refused before out is created; an error
// met while converting leaves out with what was converted before it, as janus-pp-rec does.
func File(in, out string) (Stats, error) {
	switch strings.ToLower(filepath.Ext(out)) {
	case ".opus", ".ogg":
	default:
		return Stats{}, fmt.Errorf("convert: %s: unknown format (known: .opus, .ogg)", out)
	}
	r, err := record.OpenMJR(in)
	if err != nil {
		return Stats{}, err
	}
	defer r.Close()
	info := r.Info()
	if info.Type != "a" || !strings.EqualFold(info.Codec, "opus") {
		return Stats{}, fmt.Errorf("convert: %s is a %s recording; only Opus is converted to %s", in, info.Codec, filepath.Ext(out))
	}
	if info.OpusRED > 0 {
		return Stats{}, fmt.Errorf("convert: %s carries Opus with redundancy (RED), which is not converted yet", in)
	}
	channels := uint16(1)
	if strings.Contains(info.Fmtp, "stereo=1") {
		channels = 2
	}
	w, err := oggwriter.New(out, rate, channels)
	if err != nil {
		return Stats{}, fmt.Errorf("convert: %w", err)
	}
	st, err := Opus(r, w)
	if cerr := w.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("convert: %s: %w", out, cerr)
	}
	return st, err
}

// RTPWriter takes the ordered packets: an oggwriter.OggWriter.
type RTPWriter interface {
	WriteRTP(*rtp.Packet) error
}

// Opus reads an Opus recording and writes its packets in order to w, gaps filled with silence.
func Opus(r *record.MJRReader, w RTPWriter) (Stats, error) {
	c := &opusConv{w: w}
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			c.st.Cut = true
			break
		}
		if err != nil {
			return c.st, err
		}
		if err := c.add(f.RTP); err != nil {
			return c.st, err
		}
	}
	for len(c.buf) > 0 {
		if err := c.emit(); err != nil {
			return c.st, err
		}
	}
	c.st.Duration = time.Duration(c.samples) * time.Second / rate
	return c.st, nil
}

// opusConv orders packets in a window by extended sequence number and writes them.
type opusConv struct {
	w  RTPWriter
	st Stats

	started bool
	ssrc    uint32
	highest int64      // the highest extended sequence number seen
	buf     []held     // the window, in order
	last    int64      // the extended sequence number written last
	wrote   bool       // a packet was written (last, nextTS mean something)
	nextTS  uint32     // where the last written packet ends, in RTP time
	samples int64      // written so far, silence included
	silence rtp.Packet // reused for the frames a gap becomes
}

type held struct {
	seq int64
	pkt rtp.Packet
	n   int // samples
}

// add parses a packet and puts it in its place in the window, writing the oldest when full.
func (c *opusConv) add(b []byte) error {
	var p rtp.Packet
	if err := p.Unmarshal(b); err != nil || len(p.Payload) == 0 {
		c.st.Dropped++
		return nil
	}
	n := opusSamples(p.Payload)
	if n == 0 {
		c.st.Dropped++
		return nil
	}
	if !c.started {
		c.started, c.ssrc, c.highest = true, p.SSRC, int64(p.SequenceNumber)
	}
	if p.SSRC != c.ssrc {
		c.st.Dropped++ // as janus-pp-rec, which keeps the first SSRC's packets
		return nil
	}
	seq := c.highest + int64(int16(p.SequenceNumber-uint16(c.highest)))
	c.highest = max(c.highest, seq)
	if c.wrote && seq <= c.last {
		c.st.Dropped++ // too late, or a copy of one written
		return nil
	}
	i := len(c.buf)
	for i > 0 && c.buf[i-1].seq > seq {
		i--
	}
	if i > 0 && c.buf[i-1].seq == seq {
		c.st.Dropped++
		return nil
	}
	p.Payload = append([]byte(nil), p.Payload...) // the reader reuses its buffer
	c.buf = append(c.buf, held{})
	copy(c.buf[i+1:], c.buf[i:])
	c.buf[i] = held{seq: seq, pkt: p, n: n}
	if len(c.buf) > Window {
		return c.emit()
	}
	return nil
}

// emit writes the oldest packet of the window, after silence for the time missing before it.
func (c *opusConv) emit() error {
	h := c.buf[0]
	c.buf = c.buf[1:]
	if c.wrote {
		if err := c.fill(int32(h.pkt.Timestamp - c.nextTS)); err != nil {
			return err
		}
	}
	if err := c.w.WriteRTP(&h.pkt); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	c.wrote, c.last, c.nextTS = true, h.seq, h.pkt.Timestamp+uint32(h.n)
	c.samples += int64(h.n)
	c.st.Packets++
	return nil
}

// fill writes the silence a gap of gap samples becomes, in whole 20 ms frames.
func (c *opusConv) fill(gap int32) error {
	if gap < silenceSamples || time.Duration(gap)*time.Second/rate > maxFill {
		return nil
	}
	c.silence.Header = rtp.Header{Version: 2, SSRC: c.ssrc}
	c.silence.Payload = opusSilence
	for k := int32(0); k+silenceSamples <= gap; k += silenceSamples {
		c.silence.Timestamp = c.nextTS + uint32(k)
		if err := c.w.WriteRTP(&c.silence); err != nil {
			return fmt.Errorf("convert: %w", err)
		}
		c.samples += silenceSamples
		c.st.Silence++
	}
	return nil
}

// opusSamples is how many 48 kHz samples an Opus packet holds (RFC 6716 §3.1), 0 if its table
// of contents is malformed.
func opusSamples(p []byte) int {
	toc := p[0]
	var frame int // samples per frame
	switch cfg := toc >> 3; {
	case cfg < 12: // SILK: 10, 20, 40, 60 ms
		frame = []int{480, 960, 1920, 2880}[cfg&3]
	case cfg < 16: // hybrid: 10, 20 ms
		frame = []int{480, 960}[cfg&1]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = []int{120, 240, 480, 960}[cfg&3]
	}
	frames := 1
	switch toc & 3 {
	case 1, 2:
		frames = 2
	case 3:
		if len(p) < 2 {
			return 0
		}
		frames = int(p[1] & 0x3f)
	}
	if n := frame * frames; n > 0 && n <= 5760 { // at most 120 ms
		return n
	}
	return 0
}
