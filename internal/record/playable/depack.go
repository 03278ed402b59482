package playable

import (
	"errors"

	"github.com/pion/rtp/codecs"

	"github.com/strata-rtc/strata/internal/media"
)

// depacketizer turns the payloads of one frame's packets, in order, into the frame's bitstream.
type depacketizer interface {
	// add appends what payload carries of the frame to buf.
	add(buf, payload []byte) ([]byte, error)
	// frame is the whole frame once its packets were added.
	frame(buf []byte) ([]byte, error)
	// reset forgets a frame half assembled (packets were lost).
	reset()
}

var errEmpty = errors.New("playable: empty frame")

func newDepacketizer(c media.Codec) depacketizer {
	switch c {
	case media.CodecVP8:
		return &vp8Depacketizer{}
	case media.CodecVP9:
		return &vp9Depacketizer{}
	case media.CodecH264:
		return &h264Depacketizer{}
	case media.CodecAV1:
		return &av1Depacketizer{}
	default:
		return audioDepacketizer{}
	}
}

// audioDepacketizer: one packet is one frame.
type audioDepacketizer struct{}

func (audioDepacketizer) add(buf, p []byte) ([]byte, error) { return append(buf, p...), nil }
func (audioDepacketizer) frame(buf []byte) ([]byte, error)  { return buf, nil }
func (audioDepacketizer) reset()                            {}

// vp8Depacketizer removes the VP8 payload descriptors (RFC 7741).
type vp8Depacketizer struct{ p codecs.VP8Packet }

func (d *vp8Depacketizer) add(buf, payload []byte) ([]byte, error) {
	b, err := d.p.Unmarshal(payload)
	if err != nil {
		return buf, err
	}
	if len(buf) == 0 && (d.p.S != 1 || d.p.PID != 0) {
		return buf, errors.New("playable: VP8 frame does not start with its first partition")
	}
	return append(buf, b...), nil
}

func (d *vp8Depacketizer) frame(buf []byte) ([]byte, error) { return nonEmpty(buf) }
func (d *vp8Depacketizer) reset()                           {}

// vp9Depacketizer removes the VP9 payload descriptors (RFC 9628). The layer frames of a picture
// (spatial layers) are packed into one superframe with its index (VP9 bitstream specification,
// Annex B), as the encoder made it before the sender split it into packets.
type vp9Depacketizer struct {
	p      codecs.VP9Packet
	starts []int // where each layer frame starts in the frame
	out    []byte
}

func (d *vp9Depacketizer) add(buf, payload []byte) ([]byte, error) {
	b, err := d.p.Unmarshal(payload)
	if err != nil {
		return buf, err
	}
	if len(buf) == 0 && !d.p.B {
		return buf, errors.New("playable: VP9 frame does not start with a layer frame's beginning")
	}
	if d.p.B {
		d.starts = append(d.starts, len(buf))
	}
	return append(buf, b...), nil
}

func (d *vp9Depacketizer) frame(buf []byte) ([]byte, error) {
	starts := d.starts
	d.starts = d.starts[:0]
	if len(starts) <= 1 {
		return nonEmpty(buf)
	}
	if len(starts) > 8 {
		return nil, errors.New("playable: VP9 picture of more than 8 layer frames")
	}
	// The index: a marker, each layer frame's size in mag bytes (little-endian), the marker again.
	mag := 1
	for i, at := range starts {
		end := len(buf)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		for end-at >= 1<<(8*mag) {
			mag++
		}
	}
	marker := byte(0xc0 | (mag-1)<<3 | (len(starts) - 1))
	d.out = append(append(d.out[:0], buf...), marker)
	for i, at := range starts {
		end := len(buf)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		for k := 0; k < mag; k++ {
			d.out = append(d.out, byte((end-at)>>(8*k)))
		}
	}
	return append(d.out, marker), nil
}

func (d *vp9Depacketizer) reset() { d.starts = d.starts[:0] }

// h264Depacketizer undoes single NAL unit packets, STAP-A and FU-A (RFC 6184) into Annex-B.
type h264Depacketizer struct{ p codecs.H264Packet }

func (d *h264Depacketizer) add(buf, payload []byte) ([]byte, error) {
	b, err := d.p.Unmarshal(payload)
	if err != nil {
		return buf, err
	}
	return append(buf, b...), nil
}

func (d *h264Depacketizer) frame(buf []byte) ([]byte, error) { return nonEmpty(buf) }
func (d *h264Depacketizer) reset()                           { d.p = codecs.H264Packet{} }

// av1Depacketizer undoes the AV1 aggregation (the AV1 RTP specification, §4) into the
// low-overhead bitstream: OBUs with their sizes, temporal delimiters removed.
type av1Depacketizer struct {
	p   codecs.AV1Depacketizer
	out []byte
}

func (d *av1Depacketizer) add(buf, payload []byte) ([]byte, error) {
	b, err := d.p.Unmarshal(payload)
	if err != nil {
		return buf, err
	}
	return append(buf, b...), nil
}

func (d *av1Depacketizer) frame(buf []byte) ([]byte, error) {
	var err error
	d.out, err = appendOBUs(d.out[:0], buf, func(typ byte) bool { return typ != obuTemporalDelimiter && typ != obuPadding })
	if err != nil {
		return nil, err
	}
	return nonEmpty(d.out)
}

func (d *av1Depacketizer) reset() { d.p = codecs.AV1Depacketizer{} }

func nonEmpty(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, errEmpty
	}
	return b, nil
}
