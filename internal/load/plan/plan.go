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
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Media profiles a publisher can send.
const (
	// MediaSimulcast is VP8 in three simulcast layers (rids f, h, q, highest first) plus Opus.
	MediaSimulcast = "simulcast"
	// MediaVideo is one VP8 layer (640x360) plus Opus.
	MediaVideo = "video"
	// MediaAudio is Opus only.
	MediaAudio = "audio"
)

// Profiles lists the accepted media profiles.
var Profiles = []string{MediaSimulcast, MediaVideo, MediaAudio}

// Plan is one load run.
type Plan struct {
	// Name labels the run in reports.
	Name string `yaml:"name"`
	// Server is the Janus API endpoint: http(s)://HOST:PORT/janus or ws(s)://HOST:PORT.
	Server string `yaml:"server"`
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
	// JoinTimeout bounds one client's signalling and ICE/DTLS set-up.
	JoinTimeout time.Duration `yaml:"join_timeout"`
	// ICEInterfaces restricts the clients' ICE candidates to these network interfaces (empty: all
	// but loopback; a loopback server address selects "lo").
	ICEInterfaces []string `yaml:"ice_interfaces"`
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
		JoinTimeout: 20 * time.Second,
	}
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
func Decode(r io.Reader) (Plan, error) {
	p := Default()
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return p, err
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

// Validate checks every field and returns all problems at once.
func (p *Plan) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("plan: %s: %s", field, fmt.Sprintf(format, args...)))
	}
	if err := checkServer(p.Server); err != nil {
		bad("server", "%v", err)
	}
	if p.Room == 0 {
		bad("room", "must be a positive room id")
	}
	if p.Publishers < 0 || p.Publishers > MaxClients {
		bad("publishers", "%d is outside 0…%d", p.Publishers, MaxClients)
	}
	if p.Subscribers < 0 || p.Subscribers > MaxClients {
		bad("subscribers", "%d is outside 0…%d", p.Subscribers, MaxClients)
	}
	if p.Publishers+p.Subscribers == 0 {
		bad("publishers", "a run needs at least one client")
	}
	if p.Subscribers > 0 && p.Publishers == 0 {
		bad("subscribers", "subscribers need at least one publisher")
	}
	for _, i := range p.SubscribeTo {
		if i < 0 || i >= p.Publishers {
			bad("subscribe_to", "publisher %d does not exist (there are %d)", i, p.Publishers)
		}
	}
	if !(p.JoinRate > 0) || p.JoinRate > MaxJoinRate {
		bad("join_rate", "%v is outside (0, %d] clients per second", p.JoinRate, MaxJoinRate)
	}
	if p.Duration <= 0 || p.Duration > MaxDuration {
		bad("duration", "%v is outside (0, %v]", p.Duration, MaxDuration)
	}
	if p.Warmup < 0 || p.Warmup >= p.Duration {
		bad("warmup", "%v must be at least 0 and shorter than the duration (%v)", p.Warmup, p.Duration)
	}
	if p.JoinTimeout <= 0 {
		bad("join_timeout", "must be positive")
	}
	if !validProfile(p.Media) {
		bad("media", "%q is not one of %s", p.Media, strings.Join(Profiles, ", "))
	}
	if p.Substream < -1 || p.Substream > 2 {
		bad("substream", "%d is outside -1…2", p.Substream)
	}
	if p.Substream >= 0 && p.Media != MediaSimulcast {
		bad("substream", "only applies to the %s media profile", MediaSimulcast)
	}
	return errors.Join(errs...)
}

func validProfile(m string) bool {
	for _, v := range Profiles {
		if m == v {
			return true
		}
	}
	return false
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
func (p *Plan) Video() bool { return p.Media != MediaAudio }

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
	n := p.Publishers + p.Subscribers
	if p.PublishersSubscribe && p.Publishers > 1 {
		n += p.Publishers
	}
	return n
}

// Participants is how many clients (people) the run has.
func (p *Plan) Participants() int { return p.Publishers + p.Subscribers }

// RampTime is how long the joins take at the plan's join rate.
func (p *Plan) RampTime() time.Duration {
	return time.Duration(float64(p.Participants()) / p.JoinRate * float64(time.Second))
}
