package mediasrc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pion/webrtc/v4/pkg/media/ivfreader"
	"github.com/pion/webrtc/v4/pkg/media/oggreader"
)

// MaxPayload bounds one RTP payload (descriptor included), leaving room under a 1200-byte MTU for
// the RTP header, extensions and the SRTP tag.
const MaxPayload = 1100

// vp8DescriptorLen is the payload descriptor the pacer writes: X, I, and a 15-bit picture id;
// a temporal-layered clip's adds TL0PICIDX and TID/Y (vp8TemporalDescriptorLen).
const (
	vp8DescriptorLen         = 4
	vp8TemporalDescriptorLen = 6
)

// Frame is one encoded video frame cut into payload chunks (without descriptor).
type Frame struct {
	Chunks [][]byte
	Key    bool
	// TID and Sync are the frame's temporal layer and layer-sync flag in a temporal-layered clip.
	TID  int8
	Sync bool
}

// VideoClip is a looped VP8 clip at one resolution.
type VideoClip struct {
	Layer    Layer
	Frames   []Frame
	Interval time.Duration // between frames
	// Temporal: the frames carry temporal layers, which the pacer writes in each packet's
	// descriptor (LoadTemporal). TopTID is the highest layer the pacer sends: it skips the frames
	// above it (their time still passes), as a sender that offers fewer layers (Thinned).
	Temporal bool
	TopTID   int8
	keys     []int // indexes of keyframes, ascending
}

// AudioClip is a looped Opus clip: one payload per 20 ms.
type AudioClip struct {
	Packets  [][]byte
	Interval time.Duration
}

// Media is what one profile's publishers send.
type Media struct {
	Video []*VideoClip // simulcast layers, highest first; empty for audio only
	Audio *AudioClip
}

// Load ensures the clips exist in dir and reads the ones needed: layers (highest first; none for
// audio only) and always Opus.
func Load(dir string, layers []Layer) (*Media, error) {
	if err := Ensure(dir); err != nil {
		return nil, err
	}
	return readMedia(dir, layers, VideoFile)
}

// readMedia reads the layers' clips (file names them) and the Opus clip.
func readMedia(dir string, layers []Layer, file func(string, Layer) string) (*Media, error) {
	m := &Media{}
	for _, l := range layers {
		c, err := ReadIVF(file(dir, l))
		if err != nil {
			return nil, err
		}
		c.Layer = l
		m.Video = append(m.Video, c)
	}
	a, err := ReadOgg(AudioFile(dir))
	if err != nil {
		return nil, err
	}
	m.Audio = a
	return m, nil
}

// ReadIVF reads a VP8 IVF file into frames cut into RTP-sized chunks.
func ReadIVF(path string) (*VideoClip, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, hdr, err := ivfreader.NewWith(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if hdr.FourCC != "VP80" {
		return nil, fmt.Errorf("%s: codec %q, want VP80", path, hdr.FourCC)
	}
	c := &VideoClip{Interval: time.Second / clipFPS}
	if hdr.TimebaseDenominator > 0 && hdr.TimebaseNumerator > 0 {
		c.Interval = time.Duration(float64(time.Second) * float64(hdr.TimebaseNumerator) / float64(hdr.TimebaseDenominator))
	}
	c.Layer.Width, c.Layer.Height = int(hdr.Width), int(hdr.Height)
	for {
		frame, _, err := r.ParseNextFrame()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: frame %d: %w", path, len(c.Frames), err)
		}
		if len(frame) == 0 {
			continue
		}
		c.addFrame(frame)
	}
	if len(c.keys) == 0 || c.keys[0] != 0 {
		return nil, fmt.Errorf("%s: the clip must start with a keyframe", path)
	}
	return c, nil
}

// addFrame stores a frame; bit 0 of a VP8 frame tag is 0 on keyframes (RFC 6386 §9.1).
func (c *VideoClip) addFrame(frame []byte) {
	key := frame[0]&0x01 == 0
	if key {
		c.keys = append(c.keys, len(c.Frames))
	}
	// Even-sized chunks: as many packets as needed, none much smaller than the others.
	room := MaxPayload - vp8TemporalDescriptorLen // the longest descriptor the pacer writes
	n := (len(frame) + room - 1) / room
	size := (len(frame) + n - 1) / n
	fr := Frame{Key: key}
	for off := 0; off < len(frame); off += size {
		fr.Chunks = append(fr.Chunks, frame[off:min(off+size, len(frame))])
	}
	c.Frames = append(c.Frames, fr)
}

// NextKey returns the index of the first keyframe at or after i, wrapping to the clip start.
func (c *VideoClip) NextKey(i int) int {
	for _, k := range c.keys {
		if k >= i {
			return k
		}
	}
	return c.keys[0]
}

// Kbps is the clip's average bitrate of payload bytes.
func (c *VideoClip) Kbps() float64 {
	var bytes int
	for _, f := range c.Frames {
		for _, ch := range f.Chunks {
			bytes += len(ch)
		}
	}
	return float64(bytes) * 8 / (time.Duration(len(c.Frames)) * c.Interval).Seconds() / 1000
}

// ReadOgg reads an Ogg Opus file written with one packet per page.
func ReadOgg(path string) (*AudioClip, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, head, err := oggreader.NewWith(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if head.SampleRate == 0 {
		return nil, fmt.Errorf("%s: no sample rate", path)
	}
	c := &AudioClip{Interval: opusFrameDur * time.Millisecond}
	var lastGranule uint64
	for {
		payload, ph, err := r.ParseNextPage()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(payload) >= 8 && string(payload[:8]) == "OpusTags" {
			continue
		}
		// One 20 ms packet per page means the granule (48 kHz samples) advances by 960, except on
		// the last page, which may be shorter.
		if lastGranule != 0 && ph.GranulePosition-lastGranule > 960 {
			return nil, fmt.Errorf("%s: a page holds more than one 20 ms packet", path)
		}
		lastGranule = ph.GranulePosition
		if len(payload) > 0 {
			c.Packets = append(c.Packets, payload)
		}
	}
	if len(c.Packets) == 0 {
		return nil, fmt.Errorf("%s: no Opus packets", path)
	}
	return c, nil
}
