package plan

import (
	"fmt"
	"strings"
	"time"
)

// SIP is a run of janus.plugin.sip callers: each registers as a guest (no REGISTER is sent) and
// calls URI, an echo service on the SIP side (sipp's UAS with -rtp_echo, an Asterisk echo test),
// sends Opus and checks that what comes back is its own audio (seed 001 §3.3). A plan has either
// these or videoroom publishers and subscribers, audio bridge participants or streaming viewers.
type SIP struct {
	// Calls is how many callers there are, each in its own call.
	Calls int `yaml:"calls"`
	// URI is the SIP URI every caller calls, e.g. sip:echo@10.0.0.1:5060.
	URI string `yaml:"uri"`
	// Decode is how many callers (the first ones) also decode the echo, to check its level; every
	// caller matches the echoed payloads against what it sent.
	Decode int `yaml:"decode"`
}

// IsSIP reports whether the run's clients are SIP callers.
func (p *Plan) IsSIP() bool { return p.SIP.Calls > 0 }

// DefaultSIP is Default for a plan of SIP callers: no publishers or subscribers, the Opus clip
// (a continuous tone, so every echoed frame should be loud).
func DefaultSIP() Plan {
	p := Default()
	p.Publishers, p.Subscribers = 0, 0
	p.Media = MediaAudio
	p.SIP.Decode = 4
	return p
}

// SIPEcho is seed 001's SIP test: n callers, each calling the echo service at uri, joining in
// steps of step (each held for hold) so CPU, memory and traffic are measured against the number
// of calls.
func SIPEcho(server, uri string, n, step int, hold time.Duration) Plan {
	p := DefaultSIP()
	p.Name = fmt.Sprintf("sip-echo-%d", n)
	p.Server = server
	p.SIP.Calls, p.SIP.URI = n, uri
	p.JoinRate = 5
	p.Steps = steps(step, hold)
	p.Duration, p.Warmup = stepTail, 0
	return p
}

func (p *Plan) validateSIP(v *validation) {
	s := p.SIP
	if s.Calls < 1 || s.Calls > MaxClients {
		v.bad("sip.calls", "%d is outside 1…%d", s.Calls, MaxClients)
	}
	if !strings.HasPrefix(s.URI, "sip:") && !strings.HasPrefix(s.URI, "sips:") {
		v.bad("sip.uri", "%q is not a SIP URI (sip:user@host[:port])", s.URI)
	}
	if p.Publishers != 0 || p.Subscribers != 0 || p.PublishersSubscribe || len(p.SubscribeTo) > 0 {
		v.bad("sip", "SIP callers replace videoroom publishers and subscribers: "+
			"publishers, subscribers, publishers_subscribe and subscribe_to must be unset (have %d, %d, %v, %v)",
			p.Publishers, p.Subscribers, p.PublishersSubscribe, p.SubscribeTo)
	}
	if p.Media != MediaAudio {
		v.bad("media", "SIP callers send %s (the Opus clip), not %q", MediaAudio, p.Media)
	}
	if s.Decode < 0 {
		v.bad("sip.decode", "%d is negative", s.Decode)
	}
}
