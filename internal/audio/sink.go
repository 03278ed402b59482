package audio

import (
	"fmt"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Sink is how a participant's audio track reaches the mix: an sfu.Sink on the participant's
// Receiver that hands each packet's payload, sequence number and timestamp to the participant's
// Input (its jitter buffer), and its RFC 6464 audio level to a TalkDetector. It lives in the core
// so that the audio bridge never parses a packet: the Receiver has parsed it once for all sinks,
// and the media package reads the extension.
//
// WriteRTP runs on the receiver's goroutine and allocates nothing; Resync may run on another.
type Sink struct {
	in      *Input
	levelID uint8
	pt      int           // the negotiated payload type; -1 takes any
	talk    *TalkDetector // WriteRTP's goroutine only
	onTalk  func(talking bool)

	resync  atomic.Bool // set by Resync, acted on by the next WriteRTP (the detector is not shared)
	talking atomic.Bool
	levels  atomic.Uint64
	wrongPT atomic.Uint64
}

// SinkConfig is what a Sink needs besides its input.
type SinkConfig struct {
	// AudioActivePackets and AudioLevelAverage are the room's talking detection settings (Janus's
	// audio_active_packets and audio_level_average; zero for Janus's defaults).
	AudioActivePackets, AudioLevelAverage int
	// OnTalk is called on the receiver's goroutine when the participant starts or stops talking;
	// keep it short. May be nil.
	OnTalk func(talking bool)
	// PayloadType is the one payload type the participant negotiated: packets of any other (a
	// codec the mix cannot decode as this one) are dropped and counted. AnyPayloadType takes all.
	PayloadType int
}

// AnyPayloadType, as SinkConfig.PayloadType, takes packets of every payload type.
const AnyPayloadType = -1

// NewSink returns the sink feeding recv's packets into in. The input must decode the receiver's
// codec; the audio level is read when the receiver's publisher negotiated the extension.
func NewSink(recv *sfu.Receiver, in *Input, cfg SinkConfig) (*Sink, error) {
	if recv.Codec() != in.Codec() {
		return nil, fmt.Errorf("audio: a %q track cannot feed an input decoding %q", recv.Codec(), in.Codec())
	}
	return &Sink{
		in:      in,
		levelID: recv.Config().Extensions.AudioLevel,
		talk:    NewTalkDetector(cfg.AudioActivePackets, cfg.AudioLevelAverage),
		onTalk:  cfg.OnTalk,
		pt:      cfg.PayloadType,
	}, nil
}

// WriteRTP queues the packet for the mix and observes its audio level.
func (s *Sink) WriteRTP(p *sfu.Packet) {
	if s.pt >= 0 && int(p.Header.PayloadType) != s.pt {
		s.wrongPT.Add(1)
		return
	}
	if s.resync.Swap(false) {
		s.restartTalk()
	}
	s.in.Push(p.Header.Seq, p.Header.Timestamp, p.Payload())
	if s.levelID == 0 {
		return
	}
	level, _, ok := media.AudioLevel(p.Header.Extension(p.Bytes, s.levelID))
	if !ok {
		return
	}
	s.levels.Add(1)
	if talking, changed := s.talk.Observe(level); changed {
		s.talking.Store(talking)
		if s.onTalk != nil {
			s.onTalk(talking)
		}
	}
}

// Resync says the stream restarted (it was muted and resumes): the input prebuffers again and its
// decoder starts afresh, and talking detection starts over with the next packet.
func (s *Sink) Resync() {
	s.in.Resync()
	s.resync.Store(true)
}

// restartTalk starts the detector afresh; a participant who talked when the stream stopped has
// stopped talking (the detector forgets its decision, and the events must agree with it).
func (s *Sink) restartTalk() {
	s.talk.Reset()
	if s.talking.Swap(false) && s.onTalk != nil {
		s.onTalk(false)
	}
}

// Talking is the talk detector's last decision.
func (s *Sink) Talking() bool { return s.talking.Load() }

// WrongPayloadType counts the packets dropped for their payload type.
func (s *Sink) WrongPayloadType() uint64 { return s.wrongPT.Load() }

// Levels counts the packets whose audio level was read.
func (s *Sink) Levels() uint64 { return s.levels.Load() }

var _ sfu.Sink = (*Sink)(nil)
