package audio

import "sync"

// InputStats counts one participant's input beyond the jitter buffer's counters.
type InputStats struct {
	Jitter    JitterStats
	FEC       uint64 // lost frames decoded from the next packet (its FEC data; libopus conceals when it has none)
	Concealed uint64 // lost frames synthesised by PLC
	Corrupt   uint64 // packets libopus refused, or not 20 ms long (concealed instead)
}

// Input is one participant's way into the mix: packets arrive on the participant's goroutine
// (Push), frames leave on the mixer's (Next). Only the jitter buffer is shared between the two and
// is locked; decoding runs outside the lock, on the mixer's goroutine.
type Input struct {
	mu     sync.Mutex
	jitter *Jitter

	dec   *Decoder // mixer goroutine only
	pcm   []int16
	stats InputStats // FEC, Concealed, Corrupt: mixer goroutine only
}

// NewInput returns an input decoding Opus into format f (the room's rate; the participant's
// channels) after prebuffer packets.
func NewInput(f Format, prebuffer int) (*Input, error) {
	dec, err := NewDecoder(f)
	if err != nil {
		return nil, err
	}
	return &Input{jitter: NewJitter(prebuffer, OpusClock*FrameMs/1000), dec: dec, pcm: make([]int16, f.FrameLen())}, nil
}

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
	return in.dec.Reset()
}

// Next returns this tick's decoded frame, or nil when the participant contributes nothing. The
// slice is the input's own and valid until the next call.
func (in *Input) Next() []int16 {
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
