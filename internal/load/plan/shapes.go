package plan

import (
	"fmt"
	"time"
)

// BenchRoom is the room the benchmark shapes create (servers' sample configurations already
// define 1234).
const BenchRoom = 4001

// FanOut is one simulcast publisher sent to n subscribers, each asking for the highest layer.
func FanOut(server string, n int) Plan {
	p := Default()
	p.Name = fmt.Sprintf("fanout-%d", n)
	p.Server = server
	p.Room, p.CreateRoom = BenchRoom, true
	p.Publishers = 1
	p.Subscribers = n
	p.Media = MediaSimulcast
	p.Substream = 2
	p.JoinRate = 10
	return p
}

// StreamingFanOut is the fan-out through the streaming plugin: one rtp mountpoint fed plain RTP
// (VP8 at 1280x720, the fan-out publisher's top layer, and Opus) watched by n viewers.
func StreamingFanOut(server string, n int) Plan {
	p := DefaultStreaming()
	p.Name = fmt.Sprintf("streaming-fanout-%d", n)
	p.Server = server
	p.Room, p.CreateRoom = BenchRoom, true
	p.Streaming.Viewers = n
	p.JoinRate = 10
	return p
}

// Videoroom is seed 001's scenario: publishers join first (each also receiving every other
// publisher, as in a conference), then receive-only subscribers join and receive every publisher.
// The paper ran 10 publishers then 140 subscribers; the benchmark scales that down when the
// machine cannot hold the generator.
func Videoroom(server string, publishers, subscribers int) Plan {
	p := Default()
	p.Name = fmt.Sprintf("videoroom-%dx%d", publishers, subscribers)
	p.Server = server
	p.Room, p.CreateRoom = BenchRoom, true
	p.Publishers = publishers
	p.Subscribers = subscribers
	p.PublishersSubscribe = true
	p.Media = MediaSimulcast
	p.Substream = 0 // the paper's publishers sent about 180 kbit/s; the q layer is closest
	p.JoinRate = 5
	p.Duration = 20 * time.Second
	return p
}

// AudioConference is seed 001's audio-only SFU conference: n participants, each publishing Opus
// and receiving the n-1 others.
func AudioConference(server string, n int) Plan {
	p := Default()
	p.Name = fmt.Sprintf("audioconf-%d", n)
	p.Server = server
	p.Room, p.CreateRoom = BenchRoom, true
	p.Publishers = n
	p.Subscribers = 0
	p.PublishersSubscribe = true
	p.Media = MediaAudio
	p.JoinRate = 5
	p.Duration = 20 * time.Second
	return p
}

// AudioBridgeRoom is the audio bridge room the benchmark shapes join: the wideband (16 kHz)
// sample room 1234 that Janus's demo expects, which both servers' configurations define.
const AudioBridgeRoom = 1234

// AudioBridgeStress is seed 001's stress test of the audio bridge: participants join one
// wideband room in steps of step, each step held for hold, until max participants or until the
// server falls behind real time (more than 5 % of the mixes' frames late by more than 20 ms, or
// more than 1 % lost, in a step's window; plan.Steps). The paper went to 200.
func AudioBridgeStress(server string, max, step int, hold time.Duration) Plan {
	p := audioBridge(server, fmt.Sprintf("audiobridge-stress-%d", max), max, step, hold)
	p.Steps.StopWhenBehind = true
	return p
}

// AudioBridgeConference is the MCU half of seed 001's MCU-versus-SFU comparison: n participants
// in one wideband audio bridge room, joining in steps of step so every size up to n is measured.
func AudioBridgeConference(server string, n, step int, hold time.Duration) Plan {
	return audioBridge(server, fmt.Sprintf("mcu-%d", n), n, step, hold)
}

// VoiceConference is the SFU half: n videoroom publishers sending the same voice in the same talk
// pattern, each receiving the n-1 others, joining in steps of step.
func VoiceConference(server string, n, step int, hold time.Duration) Plan {
	p := AudioConference(server, n)
	p.Name = fmt.Sprintf("sfu-%d", n)
	p.Media = MediaVoice
	p.JoinRate = 10
	p.Steps = steps(step, hold)
	p.Duration, p.Warmup = stepTail, 0
	return p
}

// stepTail is how long a stepped shape holds after its last step (which was measured already).
const stepTail = 2 * time.Second

func audioBridge(server, name string, n, step int, hold time.Duration) Plan {
	p := DefaultAudioBridge()
	p.Name = name
	p.Server = server
	p.Room = AudioBridgeRoom
	p.AudioBridge.Participants = n
	p.JoinRate = 10
	p.Steps = steps(step, hold)
	p.Duration, p.Warmup = stepTail, 0
	return p
}

func steps(size int, hold time.Duration) Steps {
	s := Default().Steps
	s.Size, s.Hold = size, hold
	s.Settle = min(s.Settle, hold/3)
	return s
}
