package audio

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/media"
)

// InputStats counts one participant's input beyond the jitter buffer's counters.
type InputStats struct {
	Jitter    JitterStats
	FEC       uint64 // lost frames decoded from the next packet (its FEC data; libopus conceals when it has none)
	Concealed uint64 // lost frames synthesised by PLC
	Corrupt   uint64 // packets the decoder refused, or not 20 ms long (concealed instead)
}

// FrameDecoder turns one participant's packets into 20 ms frames of the room's format, whatever
// the codec: Opus (*Decoder) and G.711 (*G711Decoder) implement it. pcm holds at least one frame.
type FrameDecoder interface {
	// Decode decodes one packet holding exactly one 20 ms frame.
	Decode(pkt []byte, pcm []int16) error
	// DecodeFEC recovers the frame lost just before next from next's redundancy, or conceals it
	// when the codec has none.
	DecodeFEC(next []byte, pcm []int16) error
	// Conceal synthesises a lost frame.
	Conceal(pcm []int16) error
	// Reset forgets the decoder's history (a restarted stream).
	Reset() error
}

// decoders are the codecs a participant may send, by the media package's codec identity; the RTP
// clock of each comes from the codec table.
var decoders = map[media.Codec]func(Format) (FrameDecoder, error){
	media.CodecOpus: func(f Format) (FrameDecoder, error) { return NewDecoder(f) },
	media.CodecPCMU: func(f Format) (FrameDecoder, error) { return NewG711Decoder(f, ULaw) },
	media.CodecPCMA: func(f Format) (FrameDecoder, error) { return NewG711Decoder(f, ALaw) },
}

// Input is one participant's way into the mix: packets arrive on the participant's goroutine
// (Push), frames leave on the mixer's (Next). Only the jitter buffer is shared between the two and
// is locked; decoding runs outside the lock, on the mixer's goroutine.
type Input struct {
	mu     sync.Mutex
	jitter *Jitter
	codec  media.Codec

	// resetDec asks the mixer's goroutine, which owns the decoder, to reset it before the next
	// frame (Resync runs on the participant's goroutine).
	resetDec atomic.Bool

	dec   FrameDecoder // mixer goroutine only
	pcm   []int16
	stats InputStats // FEC, Concealed, Corrupt: mixer goroutine only
}

// NewInput returns an input decoding Opus into format f (the room's rate; the participant's
// channels) after prebuffer packets.
func NewInput(f Format, prebuffer int) (*Input, error) {
	return NewCodecInput(media.CodecOpus, f, prebuffer)
}

// NewCodecInput returns an input decoding codec c (Opus, PCMU or PCMA) into format f after
// prebuffer packets.
func NewCodecInput(c media.Codec, f Format, prebuffer int) (*Input, error) {
	newDec, ok := decoders[c]
	if !ok {
		return nil, fmt.Errorf("audio: codec %q cannot join a mix", c)
	}
	dec, err := newDec(f)
	if err != nil {
		return nil, err
	}
	frameTS := c.ClockRate() * FrameMs / 1000
	return &Input{jitter: NewJitter(prebuffer, frameTS), codec: c, dec: dec, pcm: make([]int16, f.FrameLen())}, nil
}

// Codec is the codec the input decodes.
func (in *Input) Codec() media.Codec { return in.codec }

// Push queues one RTP packet's payload.
func (in *Input) Push(seq uint16, ts uint32, payload []byte) PushResult {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.jitter.Push(seq, ts, payload)
}

// Reset empties the jitter buffer and the decoder's history (resetdecoder); call it from the
// mixer's goroutine, which owns the decoder.
func (in *Input) Reset() error {
	in.mu.Lock()
	in.jitter.Reset()
	in.mu.Unlock()
	in.resetDec.Store(false)
	return in.dec.Reset()
}

// Resync is Reset from the participant's goroutine (the stream was muted and resumes, or
// restarted): the jitter buffer empties now and prebuffers again, the decoder is reset by the
// mixer's goroutine before its next frame.
func (in *Input) Resync() {
	in.mu.Lock()
	in.jitter.Reset()
	in.mu.Unlock()
	in.resetDec.Store(true)
}

// Next returns this tick's decoded frame, or nil when the participant contributes nothing. The
// slice is the input's own and valid until the next call.
func (in *Input) Next() []int16 {
	if in.resetDec.Swap(false) {
		// A failed reset leaves the old history: the next frames may click, nothing worse.
		_ = in.dec.Reset()
	}
	in.mu.Lock()
	f := in.jitter.Pull()
	in.mu.Unlock()
	switch f.Kind {
	case Packet:
		if in.dec.Decode(f.Payload, in.pcm) != nil {
			in.stats.Corrupt++
			return in.conceal()
		}
	case Lost:
		if f.FEC == nil {
			return in.conceal()
		}
		if in.dec.DecodeFEC(f.FEC, in.pcm) != nil {
			in.stats.Corrupt++
			return in.conceal()
		}
		in.stats.FEC++
	default:
		return nil
	}
	return in.pcm
}

func (in *Input) conceal() []int16 {
	in.stats.Concealed++
	if in.dec.Conceal(in.pcm) != nil {
		return nil
	}
	return in.pcm
}

// Stats returns the counters; call it from the mixer's goroutine.
func (in *Input) Stats() InputStats {
	in.mu.Lock()
	s := in.stats
	s.Jitter = in.jitter.Stats()
	in.mu.Unlock()
	return s
}
