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
