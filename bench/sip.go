package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/sipecho"
	"github.com/strata-rtc/strata/internal/rig"
)

// Seed 001's SIP test (§3.3, Fig. 7 and 8): callers join in steps, each a WebRTC client of the
// server's SIP plugin calling an echo service on the SIP side (sipp's UAS with -rtp_echo), and the
// server's CPU, memory and traffic are measured against the number of calls. The paper's echo
// service was Asterisk's echo test; its 330 calls took 22 % of a 16-core machine, linearly. Every
// caller checks that what comes back is its own audio (plan.SIP), so a broken gateway gives no
// figures.
const sipScenario = "sip"

// sipScale sizes the sip scenario.
type sipScale struct {
	Max, Step int
	Hold      time.Duration
}

var sipScales = map[string]sipScale{
	"small": {Max: 40, Step: 10, Hold: 10 * time.Second},
	"full":  {Max: 200, Step: 20, Hold: 15 * time.Second},
}

func addSIPFlags(fs *flag.FlagSet, s *sipScale) {
	fs.IntVar(&s.Max, "sip-max", 0, "sip: most calls (default: the scale's)")
	fs.IntVar(&s.Step, "sip-step", 0, "sip: calls joining per step")
	fs.DurationVar(&s.Hold, "sip-hold", 0, "sip: hold after each step")
}

// merge returns the scale with the flags that were given.
func (s sipScale) merge(flags sipScale) sipScale {
	if flags.Max > 0 {
		s.Max = flags.Max
	}
	if flags.Step > 0 {
		s.Step = flags.Step
	}
	if flags.Hold > 0 {
		s.Hold = flags.Hold
	}
	return s
}

// sippPort is the echo service's SIP port on the host's end of the veth (its own address, so
// nothing else on the machine holds it); its RTP echo port is found free at start.
const sippPort = 5090

func sipEchoScenario(s sipScale, server string, ns *rig.Netns) scenario {
	uri := fmt.Sprintf("sip:echo@%s:%d", ns.HostIP, sippPort)
	return scenario{name: sipScenario,
		title:      fmt.Sprintf("SIP gateway: WebRTC callers of an echo service on the SIP side (sipp -rtp_echo), %d at a time, up to %d calls", s.Step, s.Max),
		plans:      []plan.Plan{plan.SIPEcho(server, uri, s.Max, s.Step, s.Hold)},
		strataYAML: fmt.Sprintf("plugins: {sip: {enabled: true, local_ip: %q}}", ns.ServerIP),
		sidecar: func(dir string) (func() error, error) {
			e, err := sipecho.Start(ns.HostIP, sippPort, dir)
			if err != nil {
				return nil, err
			}
			return func() error { e.Stop(); return nil }, nil
		},
	}
}
