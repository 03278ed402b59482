package plan

import (
	"flag"
	"os"
	"path/filepath"
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
	for _, p := range []Plan{FanOut("http://h/janus", 8), Videoroom("http://h/janus", 10, 140), AudioConference("http://h/janus", 20)} {
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
}

func FuzzParse(f *testing.F) {
	f.Add("server: http://h/janus\npublishers: 3\nsubscribers: 2\nsubscribe_to: [0]\n")
	f.Add("server: ws://h\nmedia: audio\nduration: 1h\njoin_rate: 0.5\n")
	f.Add("{}")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		// Anything accepted must be runnable: limits hold and derived numbers are sane.
		if p.Participants() <= 0 || p.Participants() > 2*MaxClients || p.RampTime() < 0 || p.Duration <= 0 || p.JoinRate <= 0 {
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
			p.Server = "http://127.0.0.1:8088/janus"
			err = p.Validate()
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
