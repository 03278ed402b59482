package audio

import (
	"errors"
	"fmt"

	"github.com/hraban/opus"
)

// FrameMs is the mixer's frame: every participant's audio is pulled, mixed and encoded in 20 ms
// steps, as Janus's audio bridge does.
const FrameMs = 20

// OpusClock is the RTP clock rate of Opus whatever the room's sampling rate (RFC 7587), so one
// 20 ms Opus frame advances the RTP timestamp by 960.
const OpusClock = 48000

// MaxPacket bounds one encoded 20 ms Opus packet: a single-frame packet is at most 1275 bytes of
// frame plus the TOC byte (RFC 6716 §3.2.1). Larger payloads are refused, not truncated.
const MaxPacket = 1276

// ErrFrameDuration is returned when a packet does not hold exactly one 20 ms frame.
var ErrFrameDuration = errors.New("audio: packet is not one 20 ms frame")

// Format is a room's (or a participant's) PCM format: sampling rate and channels.
type Format struct {
	Rate     int // 8000, 12000, 16000, 24000 or 48000 (Janus's sampling_rate)
	Channels int // 1 or 2 (stereo when the room has spatial audio)
}

// Validate reports whether libopus can run at this format.
func (f Format) Validate() error {
	switch f.Rate {
	case 8000, 12000, 16000, 24000, 48000:
	default:
		return fmt.Errorf("audio: sampling rate %d is not one of 8000, 12000, 16000, 24000, 48000", f.Rate)
	}
	if f.Channels != 1 && f.Channels != 2 {
		return fmt.Errorf("audio: %d channels: must be 1 or 2", f.Channels)
	}
	return nil
}

// Samples is the number of samples per channel in one frame.
func (f Format) Samples() int { return f.Rate * FrameMs / 1000 }

// FrameLen is the length of one interleaved frame.
func (f Format) FrameLen() int { return f.Samples() * f.Channels }

// Decoder decodes one participant's Opus packets into 20 ms frames, with FEC and PLC for lost ones.
type Decoder struct {
	f   Format
	dec *opus.Decoder
}

// NewDecoder returns a decoder producing PCM in format f.
func NewDecoder(f Format) (*Decoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	d, err := opus.NewDecoder(f.Rate, f.Channels)
	if err != nil {
		return nil, fmt.Errorf("audio: opus decoder: %w", err)
	}
	return &Decoder{f: f, dec: d}, nil
}

// frame checks pcm and returns it trimmed to exactly one frame: libopus takes the frame size from
// the slice's capacity, and a larger one would make PLC and FEC produce more than 20 ms.
func (d *Decoder) frame(pcm []int16) ([]int16, error) {
	n := d.f.FrameLen()
	if len(pcm) < n {
		return nil, fmt.Errorf("audio: pcm buffer holds %d values, a frame needs %d", len(pcm), n)
	}
	return pcm[:n:n], nil
}

// Decode decodes pkt, which must hold one 20 ms frame, into pcm[:FrameLen]. A malformed packet,
// or one of another duration, is an error and leaves the decoder usable.
func (d *Decoder) Decode(pkt []byte, pcm []int16) error {
	out, err := d.frame(pcm)
	if err != nil {
		return err
	}
	if len(pkt) == 0 {
		return errors.New("audio: empty opus packet")
	}
	n, err := d.dec.Decode(pkt, out)
	if err != nil {
		if errors.Is(err, opus.ErrBufferTooSmall) {
			return ErrFrameDuration
		}
		return fmt.Errorf("audio: opus decode: %w", err)
	}
	if n != d.f.Samples() {
		return ErrFrameDuration
	}
	return nil
}

// DecodeFEC recovers the frame lost just before next from next's in-band FEC data (libopus
// conceals by PLC when next carries none). next itself must still be decoded with Decode.
func (d *Decoder) DecodeFEC(next []byte, pcm []int16) error {
	out, err := d.frame(pcm)
	if err != nil {
		return err
	}
	if len(next) == 0 {
		return d.Conceal(pcm)
	}
	if err := d.dec.DecodeFEC(next, out); err != nil {
		return fmt.Errorf("audio: opus fec: %w", err)
	}
	return nil
}

// Conceal synthesises a lost frame from the decoder's history (packet-loss concealment).
func (d *Decoder) Conceal(pcm []int16) error {
	out, err := d.frame(pcm)
	if err != nil {
		return err
	}
	if err := d.dec.DecodePLC(out); err != nil {
		return fmt.Errorf("audio: opus plc: %w", err)
	}
	return nil
}

// Reset forgets the decoder's history (Janus's resetdecoder request).
func (d *Decoder) Reset() error {
	nd, err := opus.NewDecoder(d.f.Rate, d.f.Channels)
	if err != nil {
		return fmt.Errorf("audio: opus decoder: %w", err)
	}
	d.dec = nd
	return nil
}

// EncoderConfig is what a listener may tune of its stream (Janus's bitrate, quality,
// expected_loss). Comparable: listeners with equal configs share one encoding of the full mix.
type EncoderConfig struct {
	Bitrate      int  // bits/s; 0 lets libopus choose
	Complexity   int  // 1..10 (Janus's quality); 0 means 4, Janus's default
	FEC          bool // in-band forward error correction
	ExpectedLoss int  // percent, 0..20 in Janus; sizes the FEC data
	DTX          bool // discontinuous transmission in silence
}

// DefaultComplexity is Janus's default quality.
const DefaultComplexity = 4

func (c EncoderConfig) validate() error {
	if c.Bitrate != 0 && (c.Bitrate < 500 || c.Bitrate > 512000) {
		return fmt.Errorf("audio: bitrate %d outside 500..512000", c.Bitrate)
	}
	if c.Complexity < 0 || c.Complexity > 10 {
		return fmt.Errorf("audio: complexity %d outside 1..10", c.Complexity)
	}
	if c.ExpectedLoss < 0 || c.ExpectedLoss > 100 {
		return fmt.Errorf("audio: expected loss %d%% outside 0..100", c.ExpectedLoss)
	}
	return nil
}

// Encoder encodes 20 ms frames of one format into Opus packets for voice (OPUS_APPLICATION_VOIP,
// as Janus).
type Encoder struct {
	f   Format
	cfg EncoderConfig
	enc *opus.Encoder
}

// NewEncoder returns an encoder for f configured with c.
func NewEncoder(f Format, c EncoderConfig) (*Encoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	e, err := opus.NewEncoder(f.Rate, f.Channels, opus.AppVoIP)
	if err != nil {
		return nil, fmt.Errorf("audio: opus encoder: %w", err)
	}
	enc := &Encoder{f: f, enc: e}
	if err := enc.Configure(c); err != nil {
		return nil, err
	}
	return enc, nil
}

// Configure applies c (Janus's configure request changes bitrate, quality and expected loss
// mid-call; libopus takes them between frames).
func (e *Encoder) Configure(c EncoderConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	complexity := c.Complexity
	if complexity == 0 {
		complexity = DefaultComplexity
	}
	var err error
	if c.Bitrate == 0 {
		err = e.enc.SetBitrateToAuto()
	} else {
		err = e.enc.SetBitrate(c.Bitrate)
	}
	err = errors.Join(err,
		e.enc.SetComplexity(complexity),
		e.enc.SetInBandFEC(c.FEC),
		e.enc.SetPacketLossPerc(c.ExpectedLoss),
		e.enc.SetDTX(c.DTX))
	if err != nil {
		return fmt.Errorf("audio: opus encoder settings: %w", err)
	}
	e.cfg = c
	return nil
}

// Config is the encoder's current configuration.
func (e *Encoder) Config() EncoderConfig { return e.cfg }

// Encode encodes one frame (pcm[:FrameLen]) into out and returns the packet's length. out should
// hold MaxPacket bytes.
func (e *Encoder) Encode(pcm []int16, out []byte) (int, error) {
	n := e.f.FrameLen()
	if len(pcm) < n {
		return 0, fmt.Errorf("audio: pcm holds %d values, a frame needs %d", len(pcm), n)
	}
	if len(out) == 0 {
		return 0, errors.New("audio: no room for the packet")
	}
	m, err := e.enc.Encode(pcm[:n], out)
	if err != nil {
		return 0, fmt.Errorf("audio: opus encode: %w", err)
	}
	return m, nil
}

// Reset forgets the encoder's history, keeping its configuration: the next packet starts a stream
// afresh, as after a listener switches onto this encoder (see Plan).
func (e *Encoder) Reset() error {
	if err := e.enc.Reset(); err != nil {
		return fmt.Errorf("audio: opus encoder reset: %w", err)
	}
	return nil
}
