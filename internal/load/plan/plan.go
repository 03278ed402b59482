// Package plan describes a load run: which server, which room, how many publishers and
// subscribers, how fast they join, how long the full load is held, and what media the publishers
// send. A plan comes from a YAML file, from command-line flags, or from both (flags win); Validate
// turns every mistake into an error that names the field. Shapes used by the benchmarks (fan-out,
// the seed-001 videoroom, an audio-only conference) are built by FanOut, Videoroom and
// AudioConference, so the benchmarks and their smoke tests share one definition.
package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// Media profiles a publisher can send.
const (
	// MediaSimulcast is VP8 in three simulcast layers (rids f, h, q, highest first) plus Opus.
	MediaSimulcast = "simulcast"
	// MediaVideo is one VP8 layer (640x360) plus Opus.
	MediaVideo = "video"
	// MediaHD is one VP8 layer at 1280x720 (~1.2 Mbit/s, the simulcast profile's top layer) plus
	// Opus: what a streaming mountpoint carries in the fan-out comparison.
	MediaHD = "hd"
	// MediaAudio is Opus only: a looped clip, sent whole whatever anyone says.
	MediaAudio = "audio"
	// MediaVoice is Opus only, speech in a call's talk pattern (package voice): at most Talkers
	// publishers talk at once, the others send their quiet room; every packet carries its audio
	// level. Audio bridge participants always send it.
	MediaVoice = "voice"
)

// Receivers of a subscription (Plan.Receiver).
const (
	ReceiverLight = "light"
	ReceiverFull  = "full"
)

// Profiles lists the accepted media profiles.
var Profiles = []string{MediaSimulcast, MediaVideo, MediaHD, MediaAudio, MediaVoice}

// Plugins the generator drives.
const (
	PluginVideoroom   = "janus.plugin.videoroom"
	PluginAudioBridge = "janus.plugin.audiobridge"
	PluginStreaming   = "janus.plugin.streaming"
	PluginSIP         = "janus.plugin.sip"
)

// Streaming is a run of janus.plugin.streaming viewers: the run sends the media as plain RTP into
// an rtp mountpoint (Room is its id) and the viewers watch it. A plan has either these or
// videoroom publishers and subscribers or audio bridge participants.
type Streaming struct {
	// Viewers is how many watch the mountpoint.
	Viewers int `yaml:"viewers"`
}

// AudioBridge is a run of janus.plugin.audiobridge participants: each joins the room, sends
// voice and receives the room's mix (everyone else), which it measures. A plan has either these
// or videoroom publishers and subscribers.
type AudioBridge struct {
	// Participants is how many join.
	Participants int `yaml:"participants"`
	// SamplingRate is the mixing rate of a room the run creates (create_room): 8000, 12000,
	// 16000 (wideband, the default), 24000 or 48000.
	SamplingRate int `yaml:"sampling_rate"`
	// Decode is how many participants (the first ones) also decode the mix they receive, to check
	// it carries speech while others talk; the rest only count and time packets (decoding every
	// mix would cost the generator as much as the server's mixing).
	Decode int `yaml:"decode"`
}

// Steps make clients join in steps, holding the load after each: the run then reports, per
// step, the server's CPU, memory and traffic and the received audio's timing against the number
// of participants (seed 001's stress tests).
type Steps struct {
	// Size is how many clients join per step; 0 means no steps (everyone joins, then the hold).
	Size int `yaml:"size"`
	// Hold is how long the load is held after a step's joins; its window, where the step is
	// measured, starts Settle after them.
	Hold   time.Duration `yaml:"hold"`
	Settle time.Duration `yaml:"settle"`
	// StopWhenBehind ends the run after the first step in whose window the server fell behind
	// real time: more than MaxLate (default 5 %) of the received audio frames late by more than
	// one 20 ms period, or more than MaxLoss (1 %) of the packets lost. One stall of a mixer makes
	// every participant's frame late at once: on a shared machine scheduling alone makes a few
	// percent late, which is not falling behind.
	StopWhenBehind bool    `yaml:"stop_when_behind"`
	MaxLate        float64 `yaml:"max_late"`
	MaxLoss        float64 `yaml:"max_loss"`
}

// Plan is one load run.
type Plan struct {
	// Name labels the run in reports.
	Name string `yaml:"name"`
	// Server is the Janus API endpoint: http(s)://HOST:PORT/janus or ws(s)://HOST:PORT.
	Server string `yaml:"server"`
	// Servers spreads a videoroom run over several servers (a cluster's nodes): publishers join
	// the first, where the room is created, and subscribers go round-robin over all of them
	// (SubscriberServer). Server, when also given, must be the first.
	Servers []string `yaml:"servers"`
	// Apart sets the last subscriber apart, on an address of its own (cluster.go).
	Apart Apart `yaml:"apart"`
	// Room is the videoroom room id.
	Room uint64 `yaml:"room"`
	// CreateRoom creates the room before the run (and destroys it after) instead of requiring it
	// to exist.
	CreateRoom bool `yaml:"create_room"`
	// Publishers is how many clients publish.
	Publishers int `yaml:"publishers"`
	// Subscribers is how many receive-only clients join after the publishers.
	Subscribers int `yaml:"subscribers"`
	// PublishersSubscribe makes every publisher also subscribe to every other publisher, as in a
	// video conference (seed 001's videoroom): one more PeerConnection per publisher.
	PublishersSubscribe bool `yaml:"publishers_subscribe"`
	// SubscribeTo picks the publishers (by index, 0-based) each subscriber receives; empty means all.
	SubscribeTo []int `yaml:"subscribe_to"`
	// JoinRate is how many clients join per second.
	JoinRate float64 `yaml:"join_rate"`
	// Duration is how long the full load is held after the last client joined.
	Duration time.Duration `yaml:"duration"`
	// Warmup is how long after the last join the steady window (where CPU per gigabit and memory
	// per PeerConnection are measured) begins: bandwidth estimators need a while to reach the
	// layers subscribers asked for.
	Warmup time.Duration `yaml:"warmup"`
	// Media is the publishers' media profile: simulcast, video or audio.
	Media string `yaml:"media"`
	// Substream is the simulcast layer subscribers ask for (0 lowest … 2 highest); -1 leaves the
	// server's default.
	Substream int `yaml:"substream"`
	// Receiver is how subscriptions receive: "light" (the default) counts SRTP packets at the
	// socket from their clear RTP headers and has Pion decrypt only a sample (the generator then
	// costs a fraction of the server); "full" runs every packet through Pion's receive stack
	// (decryption, interceptors), as before.
	Receiver string `yaml:"receiver"`
	// JoinTimeout bounds one client's signalling and ICE/DTLS set-up.
	JoinTimeout time.Duration `yaml:"join_timeout"`
	// ICEInterfaces restricts the clients' ICE candidates to these network interfaces (empty: all
	// but loopback; a loopback server address selects "lo").
	ICEInterfaces []string `yaml:"ice_interfaces"`
	// AudioBridge replaces the publishers and subscribers with audio bridge participants.
	AudioBridge AudioBridge `yaml:"audiobridge"`
	// Talkers is how many people talk at once at most (voice media and audio bridge participants);
	// Seed seeds who talks when.
	Talkers int    `yaml:"talkers"`
	Seed    uint64 `yaml:"seed"`
	// Steps make the clients join in steps.
	Steps Steps `yaml:"steps"`
	// Streaming replaces the publishers and subscribers with a plain-RTP feed and the viewers of a
	// streaming mountpoint: Room is the mountpoint's id; CreateRoom creates it (an rtp mountpoint
	// on ports the server picks) and the run feeds it; otherwise someone else feeds it.
	Streaming Streaming `yaml:"streaming"`
	// SIP replaces the publishers and subscribers with callers of janus.plugin.sip, each calling
	// an echo service on the SIP side (sip.go).
	SIP SIP `yaml:"sip"`
}

// Default is the plan every file and flag set starts from.
func Default() Plan {
	return Plan{
		Name:        "load",
		Room:        1234,
		Publishers:  1,
		Subscribers: 1,
		JoinRate:    5,
		Duration:    10 * time.Second,
		Warmup:      2 * time.Second,
		Media:       MediaSimulcast,
		Substream:   -1,
		Receiver:    ReceiverLight,
		JoinTimeout: 20 * time.Second,
		AudioBridge: AudioBridge{SamplingRate: 16000, Decode: 8},
		Talkers:     3,
		Seed:        1,
		Steps:       Steps{Hold: 10 * time.Second, Settle: 3 * time.Second, MaxLate: 0.05, MaxLoss: 0.01},
	}
}

// DefaultAudioBridge is Default for a plan of audio bridge participants: no publishers or
// subscribers, voice media.
func DefaultAudioBridge() Plan {
	p := Default()
	p.Publishers, p.Subscribers = 0, 0
	p.Media = MediaVoice
	return p
}

// DefaultStreaming is Default for a plan of streaming viewers: no publishers or subscribers, HD
// video and Opus.
func DefaultStreaming() Plan {
	p := Default()
	p.Publishers, p.Subscribers = 0, 0
	p.Media = MediaHD
	return p
}

// Limits keep a typo from starting an absurd run.
const (
	MaxClients  = 5000
	MaxDuration = 24 * time.Hour
	MaxJoinRate = 1000
)

// Load reads a YAML plan file over the defaults, without validating it (flags may still complete
// it); call Validate before use.
func Load(path string) (Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return Plan{}, err
	}
	defer f.Close()
	p, err := Decode(f)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Decode reads a YAML plan over the defaults. Unknown keys are errors, so a misspelt field is not
// silently ignored. It does not validate.
//
// A file with an audiobridge section starts from DefaultAudioBridge (no publishers, no
// subscribers, voice media).
func Decode(r io.Reader) (Plan, error) {
	p := Default()
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return p, err
	}
	var peek struct {
		AudioBridge *yaml.Node `yaml:"audiobridge"`
		Streaming   *yaml.Node `yaml:"streaming"`
		SIP         *yaml.Node `yaml:"sip"`
	}
	if yaml.Unmarshal(b, &peek) == nil {
		switch {
		case peek.AudioBridge != nil:
			p = DefaultAudioBridge()
		case peek.Streaming != nil:
			p = DefaultStreaming()
		case peek.SIP != nil:
			p = DefaultSIP()
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return p, fmt.Errorf("plan: %w", err)
	}
	return p, nil
}

// Parse decodes and validates a YAML plan.
func Parse(r io.Reader) (Plan, error) {
	p, err := Decode(r)
	if err != nil {
		return p, err
	}
	return p, p.Validate()
}

func checkServer(s string) error {
	if s == "" {
		return errors.New("missing (e.g. http://127.0.0.1:8088/janus)")
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return fmt.Errorf("%q: scheme must be http, https, ws or wss", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	return nil
}

// Video reports whether the profile sends video.
func (p *Plan) Video() bool {
	return p.Media == MediaSimulcast || p.Media == MediaVideo || p.Media == MediaHD
}

// IsAudioBridge reports whether the run's clients are audio bridge participants.
func (p *Plan) IsAudioBridge() bool { return p.AudioBridge.Participants > 0 }

// IsStreaming reports whether the run's clients are streaming viewers.
func (p *Plan) IsStreaming() bool { return p.Streaming.Viewers > 0 }

// Plugin is the Janus plugin the run drives.
func (p *Plan) Plugin() string {
	switch {
	case p.IsAudioBridge():
		return PluginAudioBridge
	case p.IsStreaming():
		return PluginStreaming
	case p.IsSIP():
		return PluginSIP
	}
	return PluginVideoroom
}

// Receivers is how many receive-only clients the run has: subscribers, or streaming viewers.
func (p *Plan) Receivers() int { return p.Subscribers + p.Streaming.Viewers }

// Feeds is the list of publisher indexes each subscriber receives.
func (p *Plan) Feeds() []int {
	if len(p.SubscribeTo) > 0 {
		return p.SubscribeTo
	}
	all := make([]int, p.Publishers)
	for i := range all {
		all[i] = i
	}
	return all
}

// PeerConnections is how many PeerConnections the server holds once everyone has joined.
func (p *Plan) PeerConnections() int {
	n := p.Publishers + p.Subscribers + p.AudioBridge.Participants + p.Streaming.Viewers + p.SIP.Calls
	if p.PublishersSubscribe && p.Publishers > 1 {
		n += p.Publishers
	}
	return n
}

// Participants is how many clients (people) the run has.
func (p *Plan) Participants() int {
	return p.Publishers + p.Subscribers + p.AudioBridge.Participants + p.Streaming.Viewers + p.SIP.Calls
}
