package plan

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFullPlan(t *testing.T) {
	p, err := Parse(strings.NewReader(`
name: conf
server: ws://10.0.0.2:8188
room: 77
create_room: true
publishers: 10
subscribers: 140
publishers_subscribe: true
subscribe_to: [0, 3]
join_rate: 2.5
duration: 45s
warmup: 5s
media: simulcast
substream: 0
join_timeout: 30s
ice_interfaces: [veth1]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{Name: "conf", Server: "ws://10.0.0.2:8188", Room: 77, CreateRoom: true, Publishers: 10, Subscribers: 140,
		PublishersSubscribe: true, SubscribeTo: []int{0, 3}, JoinRate: 2.5, Duration: 45 * time.Second, Warmup: 5 * time.Second,
		Media: MediaSimulcast, Substream: 0, JoinTimeout: 30 * time.Second, ICEInterfaces: []string{"veth1"}}
	if p.Name != want.Name || p.Server != want.Server || p.Room != want.Room || !p.CreateRoom || p.Publishers != 10 ||
		p.Subscribers != 140 || !p.PublishersSubscribe || len(p.SubscribeTo) != 2 || p.SubscribeTo[1] != 3 || p.JoinRate != 2.5 ||
		p.Duration != want.Duration || p.Warmup != want.Warmup || p.Substream != 0 || p.JoinTimeout != want.JoinTimeout || p.ICEInterfaces[0] != "veth1" {
		t.Fatalf("parsed %+v", p)
	}
	if p.PeerConnections() != 160 || p.Participants() != 150 || len(p.Feeds()) != 2 || p.RampTime() != 60*time.Second {
		t.Errorf("derived: %d PCs, %d participants, feeds %v, ramp %v", p.PeerConnections(), p.Participants(), p.Feeds(), p.RampTime())
	}
}

func TestDefaultsFillAShortPlan(t *testing.T) {
	p, err := Parse(strings.NewReader("server: http://127.0.0.1:8088/janus\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Room != 1234 || p.Publishers != 1 || p.Subscribers != 1 || p.Media != MediaSimulcast || p.Substream != -1 || len(p.Feeds()) != 1 {
		t.Fatalf("defaults: %+v", p)
	}
}

func TestBadPlansNameTheField(t *testing.T) {
	cases := map[string]string{
		"publishers: 3\n":                                         "server: missing",
		"server: ftp://x\n":                                       "scheme",
		"server: http://\n":                                       "no host",
		"server: http://h/janus\npublishers: -1\n":                "publishers: -1",
		"server: http://h/janus\npublishers: 0\n":                 "subscribers need at least one publisher",
		"server: http://h/janus\npublishers: 0\nsubscribers: 0\n": "at least one client",
		"server: http://h/janus\nsubscribe_to: [1]\n":             "subscribe_to: publisher 1 does not exist",
		"server: http://h/janus\njoin_rate: 0\n":                  "join_rate",
		"server: http://h/janus\nduration: -1s\n":                 "duration",
		"server: http://h/janus\nwarmup: 20s\n":                   "warmup",
		"server: http://h/janus\nmedia: 4k\n":                     `media: "4k"`,
		"server: http://h/janus\nsubstream: 5\n":                  "substream: 5",
		"server: http://h/janus\nmedia: audio\nsubstream: 1\n":    "substream: only applies",
		"server: http://h/janus\nroom: 0\n":                       "room",
		"server: http://h/janus\npublisher: 3\n":                  "field publisher not found",
		"server: http://h/janus\nduration: soon\n":                "`soon` into time.Duration",
		"[1, 2]\n": "cannot unmarshal",
	}
	for in, want := range cases {
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", in, err, want)
		}
	}
}

func TestFlagsOverrideTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte("publishers: 4\nsubscribers: 9\nmedia: audio\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := RegisterFlags(fs)
	// The file has no server: flags complete it; --subscribers overrides; media stays from the file.
	if err := fs.Parse([]string{"--plan", path, "--server", "http://h:8088/janus", "--subscribers", "2", "--subscribe-to", "1, 3", "--ice-interface", "a,b"}); err != nil {
		t.Fatal(err)
	}
	p, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	if p.Publishers != 4 || p.Subscribers != 2 || p.Media != MediaAudio || p.Server != "http://h:8088/janus" || len(p.SubscribeTo) != 2 || len(p.ICEInterfaces) != 2 {
		t.Fatalf("merged plan %+v", p)
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	f = RegisterFlags(fs)
	_ = fs.Parse([]string{"--server", "http://h/janus", "--subscribe-to", "x"})
	if _, err := f.Build(); err == nil || !strings.Contains(err.Error(), "subscribe-to") {
		t.Fatalf("bad --subscribe-to: %v", err)
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	f = RegisterFlags(fs)
	_ = fs.Parse([]string{"--plan", filepath.Join(t.TempDir(), "missing.yaml")})
	if _, err := f.Build(); err == nil {
		t.Fatal("a missing plan file was accepted")
	}
}

func TestShapesAreValid(t *testing.T) {
	for _, p := range []Plan{FanOut("http://h/janus", 8), Videoroom("http://h/janus", 10, 140), AudioConference("http://h/janus", 20),
		AudioBridgeStress("http://h/janus", 200, 10, 15*time.Second), AudioBridgeConference("http://h/janus", 20, 2, 10*time.Second),
		VoiceConference("http://h/janus", 20, 2, 10*time.Second)} {
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
	if v := Videoroom("http://h/janus", 10, 140); v.PeerConnections() != 160 {
		t.Errorf("seed videoroom: %d PeerConnections", v.PeerConnections())
	}
	if a := AudioConference("http://h/janus", 20); a.Video() || a.PeerConnections() != 40 {
		t.Errorf("audio conference: video %v, %d PCs", a.Video(), a.PeerConnections())
	}
	st := AudioBridgeStress("http://h/janus", 200, 10, 15*time.Second)
	if st.Plugin() != PluginAudioBridge || st.Room != AudioBridgeRoom || st.StepCount() != 20 || !st.Steps.StopWhenBehind || st.Steps.Settle != 3*time.Second {
		t.Errorf("stress: %+v", st)
	}
	mcu, sfu := AudioBridgeConference("http://h/janus", 20, 2, 6*time.Second), VoiceConference("http://h/janus", 20, 2, 6*time.Second)
	if mcu.PeerConnections() != 20 || sfu.PeerConnections() != 40 || sfu.Plugin() != PluginVideoroom || sfu.Media != MediaVoice ||
		mcu.StepCount() != 10 || sfu.StepCount() != 10 || mcu.Steps.StopWhenBehind || sfu.Steps.Settle != 2*time.Second {
		t.Errorf("MCU %+v\nSFU %+v", mcu, sfu)
	}
}

func TestParseAudioBridgePlan(t *testing.T) {
	p, err := Parse(strings.NewReader(`
server: http://h:8088/janus
room: 1234
audiobridge:
  participants: 25
  sampling_rate: 48000
  decode: 2
talkers: 4
seed: 9
steps:
  size: 10
  hold: 12s
  stop_when_behind: true
  max_late: 0.02
`))
	if err != nil {
		t.Fatal(err)
	}
	ab := p.AudioBridge
	if !p.IsAudioBridge() || ab.Participants != 25 || ab.SamplingRate != 48000 || ab.Decode != 2 || p.Publishers != 0 || p.Subscribers != 0 ||
		p.Media != MediaVoice || p.Talkers != 4 || p.Seed != 9 || p.Plugin() != PluginAudioBridge || p.Video() {
		t.Fatalf("parsed %+v", p)
	}
	// Steps of 10, 10 and 5, each held 12 s; settle and max_loss keep their defaults.
	s := p.Steps
	if s.Size != 10 || s.Hold != 12*time.Second || s.Settle != 3*time.Second || !s.StopWhenBehind || s.MaxLate != 0.02 || s.MaxLoss != 0.01 {
		t.Fatalf("steps %+v", s)
	}
	if p.PeerConnections() != 25 || p.Participants() != 25 || p.StepCount() != 3 || p.RampTime() != 5*time.Second+36*time.Second {
		t.Errorf("derived: %d PCs, %d participants, %d steps, ramp %v", p.PeerConnections(), p.Participants(), p.StepCount(), p.RampTime())
	}
	if d := Default(); d.IsAudioBridge() || d.Plugin() != PluginVideoroom || d.StepCount() != 1 || d.Talkers != 3 || d.AudioBridge.SamplingRate != 16000 {
		t.Errorf("videoroom defaults: %+v", d)
	}
}

func TestBadAudioBridgePlansNameTheField(t *testing.T) {
	const ab = "server: http://h/janus\naudiobridge: {participants: 4}\n"
	cases := map[string]string{
		ab + "publishers: 2\n":                                                           "publishers, subscribers, publishers_subscribe and subscribe_to must be unset",
		ab + "publishers_subscribe: true\n":                                              "must be unset",
		ab + "media: audio\n":                                                            `audio bridge participants send voice, not "audio"`,
		"server: http://h/janus\naudiobridge: {participants: -1}\n":                      "audiobridge.participants: -1",
		"server: http://h/janus\naudiobridge: {participants: 0}\n":                       "at least one client",
		"server: http://h/janus\naudiobridge: {participants: 2, sampling_rate: 44100}\n": "audiobridge.sampling_rate: 44100",
		"server: http://h/janus\naudiobridge: {participants: 2, decode: -1}\n":           "audiobridge.decode: -1",
		"server: http://h/janus\naudiobridge: {participants: 2, mixers: 1}\n":            "field mixers not found",
		ab + "talkers: -1\n":                                                             "talkers: -1",
		ab + "steps: {size: -1}\n":                                                       "steps.size: -1",
		ab + "steps: {size: 2, hold: 0s}\n":                                              "steps.hold",
		ab + "steps: {size: 2, hold: 5s, settle: 5s}\n":                                  "steps.settle",
		ab + "steps: {size: 2, max_late: 1.5}\n":                                         "steps.max_late: 1.5",
		ab + "steps: {size: 2, max_loss: -0.1}\n":                                        "steps.max_loss",
		ab + "steps: {stop_when_behind: true}\n":                                         "steps.stop_when_behind: needs steps",
		"server: http://h/janus\nmedia: voice\nsubstream: 0\n":                           "substream: only applies",
	}
	for in, want := range cases {
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", in, err, want)
		}
	}
	// Voice media also works for videoroom publishers (the SFU half of the comparison).
	if _, err := Parse(strings.NewReader("server: http://h/janus\npublishers: 3\nsubscribers: 0\npublishers_subscribe: true\nmedia: voice\n")); err != nil {
		t.Fatal(err)
	}
}

func TestAudioBridgeFlags(t *testing.T) {
	build := func(args ...string) (Plan, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f := RegisterFlags(fs)
		if err := fs.Parse(append([]string{"--server", "http://h/janus"}, args...)); err != nil {
			t.Fatal(err)
		}
		return f.Build()
	}
	p, err := build("--audiobridge", "12", "--decode", "3", "--talkers", "2", "--seed", "5", "--sampling-rate", "24000",
		"--step", "4", "--step-hold", "8s", "--step-settle", "2s", "--stop-when-behind")
	if err != nil {
		t.Fatal(err)
	}
	if p.AudioBridge != (AudioBridge{Participants: 12, SamplingRate: 24000, Decode: 3}) || p.Publishers != 0 || p.Subscribers != 0 ||
		p.Media != MediaVoice || p.Talkers != 2 || p.Seed != 5 || p.Steps.Size != 4 || p.Steps.Hold != 8*time.Second ||
		p.Steps.Settle != 2*time.Second || !p.Steps.StopWhenBehind {
		t.Fatalf("flags gave %+v", p)
	}
	if _, err := build("--audiobridge", "3", "--publishers", "2"); err == nil || !strings.Contains(err.Error(), "must be unset") {
		t.Fatalf("participants and publishers together: %v", err)
	}
	if p, err := build("--publishers", "3", "--subscribers", "0", "--media", "voice", "--step", "1"); err != nil || p.Steps.Size != 1 || p.IsAudioBridge() {
		t.Fatalf("stepped voice publishers: %+v %v", p, err)
	}
}

func TestStreamingPlans(t *testing.T) {
	p, err := Parse(strings.NewReader("server: http://h/janus\nroom: 7\ncreate_room: true\nstreaming: {viewers: 5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsStreaming() || p.Plugin() != PluginStreaming || p.Publishers != 0 || p.Subscribers != 0 || p.Media != MediaHD || !p.Video() ||
		p.Receivers() != 5 || p.PeerConnections() != 5 || p.Participants() != 5 {
		t.Fatalf("parsed %+v", p)
	}
	const st = "server: http://h/janus\nstreaming: {viewers: 2}\n"
	for in, want := range map[string]string{
		st + "publishers: 1\n":                                                       "must be unset",
		st + "media: simulcast\n":                                                    `not "simulcast"`,
		st + "media: voice\n":                                                        `not "voice"`,
		st + "audiobridge: {participants: 2}\n":                                      "not both",
		"server: http://h/janus\nstreaming: {viewers: -1}\n":                         "streaming.viewers: -1",
		"server: http://h/janus\nstreaming: {viewers: 0}\n":                          "at least one client",
		"server: http://h/janus\nstreaming: {viewers: 2, mountpoint: 3}\n":           "field mountpoint not found",
		"server: http://h/janus\nstreaming: {viewers: 2}\nmedia: hd\nsubstream: 1\n": "substream: only applies",
	} {
		if _, err := Parse(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", in, err, want)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := RegisterFlags(fs)
	if err := fs.Parse([]string{"--server", "http://h/janus", "--streaming", "3", "--media", "audio", "--create-room"}); err != nil {
		t.Fatal(err)
	}
	if p, err := f.Build(); err != nil || p.Streaming.Viewers != 3 || p.Publishers != 0 || p.Subscribers != 0 || p.Media != MediaAudio || p.Video() || !p.CreateRoom {
		t.Fatalf("flags gave %+v, %v", p, err)
	}
	sf := StreamingFanOut("http://h/janus", 8)
	if err := sf.Validate(); err != nil || sf.Receivers() != 8 || sf.Plugin() != PluginStreaming || sf.Room != BenchRoom || !sf.CreateRoom || sf.Media != MediaHD {
		t.Fatalf("StreamingFanOut: %+v %v", sf, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("server: http://h/janus\npublishers: 3\nsubscribers: 2\nsubscribe_to: [0]\n")
	f.Add("server: ws://h\nmedia: audio\nduration: 1h\njoin_rate: 0.5\n")
	f.Add("{}")
	f.Add("server: http://h/janus\naudiobridge: {participants: 3, decode: 1}\nsteps: {size: 2, hold: 3s}\n")
	f.Add("server: http://h/janus\nstreaming: {viewers: 4}\nmedia: video\n")
	f.Add("server: http://h/janus\nsip: {calls: 4, uri: sip:echo@h:5090}\nsteps: {size: 2, hold: 3s}\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		// Anything accepted must be runnable: limits hold and derived numbers are sane.
		if p.Participants() <= 0 || p.Participants() > 2*MaxClients || p.RampTime() < 0 || p.Duration <= 0 || p.JoinRate <= 0 ||
			p.StepCount() < 1 || ((p.IsAudioBridge() || p.IsStreaming() || p.IsSIP()) && p.Publishers+p.Subscribers > 0) ||
			(p.IsSIP() && (p.IsAudioBridge() || p.IsStreaming() || p.Media != MediaAudio)) ||
			(p.IsStreaming() && (p.IsAudioBridge() || p.Media == MediaSimulcast || p.Media == MediaVoice)) {
			t.Fatalf("accepted an unrunnable plan %+v", p)
		}
		for _, i := range p.Feeds() {
			if i < 0 || i >= p.Publishers {
				t.Fatalf("feed %d out of range in %+v", i, p)
			}
		}
	})
}

// TestShippedPlansParse keeps the example plans in bench/plans valid (they need only a server).
func TestShippedPlansParse(t *testing.T) {
	files, _ := filepath.Glob("../../../bench/plans/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example plans found")
	}
	for _, f := range files {
		p, err := Load(f)
		if err == nil {
			if len(p.Servers) == 0 {
				p.Server = "http://127.0.0.1:8088/janus"
			}
			err = p.Validate()
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestServersSpreadSubscribersRoundRobin(t *testing.T) {
	p, err := Parse(strings.NewReader(`
servers: [http://10.0.0.11:8088/janus, http://10.0.0.12:8088/janus, ws://10.0.0.13:8188]
subscribers: 7
apart: {address: 10.0.0.2, server: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Home() != "http://10.0.0.11:8088/janus" || len(p.ServerList()) != 3 {
		t.Fatalf("home %q, servers %v", p.Home(), p.ServerList())
	}
	var got []int
	for i := range p.Subscribers {
		got = append(got, p.SubscriberServer(i))
	}
	// Round-robin, but the last (the apart subscriber) joins the server it names.
	if want := []int{0, 1, 2, 0, 1, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("subscribers' servers %v, want %v", got, want)
	}
	p.Apart = Apart{}
	if p.SubscriberServer(6) != 0 {
		t.Errorf("without an apart subscriber, subscriber 6 joins server %d", p.SubscriberServer(6))
	}
	one := Default()
	one.Server = "http://h/janus"
	if one.Home() != one.Server || one.SubscriberServer(5) != 0 {
		t.Errorf("one server: home %q, subscriber 5 on %d", one.Home(), one.SubscriberServer(5))
	}
}

func TestBadServersNameTheField(t *testing.T) {
	cases := map[string]string{
		"servers: [http://a/janus, ftp://b]\n":                                               "servers[1]: \"ftp://b\": scheme",
		"servers: [http://a/janus, http://a/janus]\n":                                        "servers[1]: \"http://a/janus\" is listed twice",
		"server: http://b/janus\nservers: [http://a/janus]\n":                                "server: \"http://b/janus\" is not the first of servers",
		"servers: [http://a/janus]\napart: {address: nowhere}\n":                             "apart.address: \"nowhere\" is not an IP address",
		"servers: [http://a/janus, http://b/janus]\napart: {address: 10.0.0.2, server: 2}\n": "apart.server: 2 is outside 0…1",
		"server: http://a/janus\napart: {address: 10.0.0.2, server: -1}\n":                   "apart.server: -1",
		"servers: [http://a/janus]\nsubscribers: 0\napart: {address: 10.0.0.2}\n":            "apart: needs a subscriber",
		"servers: [http://a/janus]\nstreaming: {viewers: 2}\n":                               "servers: only a videoroom run",
		"servers: []\n": "server: missing",
	}
	for in, want := range cases {
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", in, err, want)
		}
	}
	// The first of servers may be repeated as server.
	if _, err := Parse(strings.NewReader("server: http://a/janus\nservers: [http://a/janus, http://b/janus]\n")); err != nil {
		t.Errorf("server equal to the first of servers: %v", err)
	}
}

func TestServersFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := RegisterFlags(fs)
	if err := fs.Parse([]string{"-servers", "http://a/janus, http://b/janus", "-subscribers", "4", "-apart-address", "10.0.0.2", "-apart-server", "1"}); err != nil {
		t.Fatal(err)
	}
	p, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Servers, []string{"http://a/janus", "http://b/janus"}) || p.Apart != (Apart{Address: "10.0.0.2", Server: 1}) || p.Home() != "http://a/janus" {
		t.Errorf("plan from flags: servers %v, apart %+v", p.Servers, p.Apart)
	}
}
