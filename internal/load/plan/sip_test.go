package plan

import (
	"flag"
	"strings"
	"testing"
)

func TestSIPPlans(t *testing.T) {
	p, err := Parse(strings.NewReader("server: http://h/janus\nsip: {calls: 5, uri: \"sip:echo@10.0.0.1:5090\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsSIP() || p.Plugin() != PluginSIP || p.Publishers != 0 || p.Subscribers != 0 || p.Media != MediaAudio || p.Video() ||
		p.PeerConnections() != 5 || p.Participants() != 5 || p.SIP.Decode != 4 {
		t.Fatalf("parsed %+v", p)
	}
	const sp = "server: http://h/janus\nsip: {calls: 2, uri: sip:echo@h}\n"
	for in, want := range map[string]string{
		sp + "publishers: 1\n":                                              "must be unset",
		sp + "media: voice\n":                                               `not "voice"`,
		sp + "streaming: {viewers: 2}\n":                                    "not several",
		sp + "audiobridge: {participants: 2}\n":                             "not several",
		"server: http://h/janus\nsip: {calls: 2, uri: h}\n":                 `sip.uri: "h" is not a SIP URI`,
		"server: http://h/janus\nsip: {calls: -1, uri: sip:h}\n":            "sip.calls: -1",
		"server: http://h/janus\nsip: {calls: 1, uri: sip:h, decode: -2}\n": "sip.decode: -2",
		"server: http://h/janus\nsip: {calls: 1, uri: sip:h, to: x}\n":      "field to not found",
	} {
		if _, err := Parse(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", in, err, want)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := RegisterFlags(fs)
	if err := fs.Parse([]string{"--server", "http://h/janus", "--sip", "3", "--sip-uri", "sip:echo@h:5090", "--decode", "1"}); err != nil {
		t.Fatal(err)
	}
	if p, err := f.Build(); err != nil || p.SIP.Calls != 3 || p.SIP.URI != "sip:echo@h:5090" || p.SIP.Decode != 1 || p.Publishers != 0 || p.Media != MediaAudio {
		t.Fatalf("flags gave %+v, %v", p, err)
	}
	se := SIPEcho("http://h/janus", "sip:echo@h:5090", 40, 10, 10e9)
	if err := se.Validate(); err != nil || se.StepCount() != 4 || se.Plugin() != PluginSIP || se.Steps.Hold != 10e9 {
		t.Fatalf("SIPEcho: %+v %v", se, err)
	}
}
