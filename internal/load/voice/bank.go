// Package voice is what the load generator's audio conference participants say. A Bank holds
// speech-like clips, one per voice, and the sound of a quiet room, synthesised here and encoded
// once with libopus (internal/audio) as Chromium encodes a microphone: 48 kHz mono, 20 ms frames,
// OPUS_APPLICATION_VOIP, 32 kbit/s VBR (libwebrtc's default for one channel), complexity 9
// (its desktop default), in-band FEC on (servers answer useinbandfec=1), DTX off (Chromium turns it
// on only for usedtx=1, which neither Janus nor strata ask for). So a participant who is not
// talking keeps sending a 20 ms packet every 20 ms, of its quiet room after Chromium's noise
// suppression (noise at -70 dBov), as a browser with an open microphone does; each frame carries
// its RFC 6464 audio level so servers can detect who talks.
//
// A Floor is the talk pattern of a call: at most K participants talk at once, in spurts of
// seconds separated by pauses, chosen by a seeded random generator. A Source is one participant's
// stream: its voice while the Floor says it talks, its quiet room otherwise.
package voice

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/strata-rtc/strata/internal/audio"
)

// Rate is the sampling rate the clips are synthesised and encoded at (a browser's microphone).
const Rate = 48000

// Encoder settings: Chromium's Opus sender (see the package comment).
const (
	Bitrate    = 32000
	Complexity = 9
)

// Levels of the synthesised sound, in dBov (RMS relative to full scale).
const (
	SpeechDBov = -20 // voiced speech, as a browser's AGC delivers it
	NoiseDBov  = -70 // the quiet room after noise suppression
)

// Clip lengths; a Source loops them.
const (
	talkSeconds  = 12
	quietSeconds = 4
	frameSamples = Rate * audio.FrameMs / 1000
)

// Frame is one encoded 20 ms frame and what its RTP packet says about it.
type Frame struct {
	Payload []byte
	// Level is the frame's RFC 6464 level: its RMS in -dBov, 0 (loudest) … 127 (silence).
	Level uint8
	// Voice is RFC 6464's voice activity flag.
	Voice bool
}

// ExtByte is the frame's one-byte RFC 6464 extension element: V, then the level.
func (f Frame) ExtByte() byte {
	b := f.Level & 0x7f
	if f.Voice {
		b |= 0x80
	}
	return b
}

// Bank is the encoded sound every participant of a run draws from, shared read-only.
type Bank struct {
	Talk  [][]Frame // one looped clip per voice
	Quiet []Frame
}

// DefaultVoices is how many distinct voices the default bank has.
const DefaultVoices = 8

var (
	defaultOnce sync.Once
	defaultBank *Bank
	defaultErr  error
)

// Default returns the bank of DefaultVoices voices, built on first use.
func Default() (*Bank, error) {
	defaultOnce.Do(func() { defaultBank, defaultErr = NewBank(DefaultVoices) })
	return defaultBank, defaultErr
}

// NewBank synthesises and encodes voices talk clips and the quiet clip. The result depends only
// on voices.
func NewBank(voices int) (*Bank, error) {
	if voices < 1 {
		return nil, fmt.Errorf("voice: %d voices", voices)
	}
	b := &Bank{}
	for v := 0; v < voices; v++ {
		frames, err := encode(speech(v, talkSeconds*Rate))
		if err != nil {
			return nil, err
		}
		b.Talk = append(b.Talk, frames)
	}
	quiet := make([]int16, quietSeconds*Rate)
	addNoise(quiet, rand.New(rand.NewPCG(0x9e3779b9, 1)), NoiseDBov)
	var err error
	if b.Quiet, err = encode(quiet); err != nil {
		return nil, err
	}
	return b, nil
}

// encode runs one encoder over the whole clip, as a browser's encoder runs over its microphone.
func encode(pcm []int16) ([]Frame, error) {
	enc, err := audio.NewEncoder(audio.Format{Rate: Rate, Channels: 1},
		audio.EncoderConfig{Bitrate: Bitrate, Complexity: Complexity, FEC: true})
	if err != nil {
		return nil, err
	}
	buf := make([]byte, audio.MaxPacket)
	var out []Frame
	for off := 0; off+frameSamples <= len(pcm); off += frameSamples {
		f := pcm[off : off+frameSamples]
		n, err := enc.Encode(f, buf)
		if err != nil {
			return nil, err
		}
		level := LevelOf(f)
		out = append(out, Frame{Payload: append([]byte(nil), buf[:n]...), Level: level, Voice: level <= -SpeechDBov+20})
	}
	return out, nil
}

// LevelOf is the RFC 6464 level of a frame: its RMS in -dBov, rounded, 0…127.
func LevelOf(pcm []int16) uint8 {
	return uint8(min(127, max(0, math.Round(-DBov(pcm)))))
}

// DBov is a frame's RMS in dB relative to full scale (-127 or below for digital silence).
func DBov(pcm []int16) float64 {
	if len(pcm) == 0 {
		return -127
	}
	var sum float64
	for _, s := range pcm {
		sum += float64(s) * float64(s)
	}
	rms := math.Sqrt(sum / float64(len(pcm)))
	if rms < 1e-3 {
		return -127
	}
	return 20 * math.Log10(rms/32768)
}

func addNoise(pcm []int16, rng *rand.Rand, dbov float64) {
	sd := 32768 * math.Pow(10, dbov/20)
	for i := range pcm {
		pcm[i] = clip16(float64(pcm[i]) + rng.NormFloat64()*sd)
	}
}

func clip16(v float64) int16 {
	return int16(max(-32768, min(32767, math.Round(v))))
}
