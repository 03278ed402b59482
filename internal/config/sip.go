package config

import (
	"fmt"
	"net"
	"time"
)

// SIP configures janus.plugin.sip (Janus: janus.plugin.sip.jcfg). Each handle gets its own SIP
// stack bound to a free port of LocalIP, as Janus's plugin gives each user its own: a
// registration's Contact then reaches exactly one handle, and a flood on one port touches one user.
type SIP struct {
	Enabled bool `yaml:"enabled"`
	// LocalIP is the address SIP and RTP sockets bind to; "" picks the first non-loopback IPv4
	// address of the host, as Janus does.
	LocalIP string `yaml:"local_ip"`
	// SDPIP is the address written in SDP c= lines (a NAT's public address); "" is LocalIP.
	SDPIP string `yaml:"sdp_ip"`
	// RTPPortRange is "min-max": the plain side's RTP/RTCP ports.
	RTPPortRange string `yaml:"rtp_port_range"`
	// SIPPortRange is "min-max" for each handle's SIP port; "" takes any free port.
	SIPPortRange string `yaml:"sip_port_range"`
	// UserAgent is the User-Agent header; a register request may override it.
	UserAgent string `yaml:"user_agent"`
	// RegisterTTL is the Expires of a REGISTER when the request names none (seconds).
	RegisterTTL int `yaml:"register_ttl"`
	// KeepaliveInterval: an OPTIONS to the registrar every so many seconds; 0 sends none.
	KeepaliveInterval int `yaml:"keepalive_interval"`
	// BehindNAT: in-dialog requests go to where the peer's messages came from rather than to its
	// Contact, and requests ask for rport (RFC 3581) so that answers find the way back.
	BehindNAT bool `yaml:"behind_nat"`
	// SIPTimerT1x64 is 64*T1 in milliseconds: how long a transaction waits (RFC 3261 Timer B/F).
	// It applies to the whole process's SIP stack.
	SIPTimerT1x64 int `yaml:"sip_timer_t1x64"`
	// RecordingsDir is where `recording` writes its .mjr files; filenames stay inside it.
	RecordingsDir string `yaml:"recordings_dir"`
}

// T1 is the SIP retransmission timer from SIPTimerT1x64.
func (s SIP) T1() time.Duration { return time.Duration(s.SIPTimerT1x64) * time.Millisecond / 64 }

func (s SIP) validate() []error {
	var errs []error
	if _, _, err := ParsePortRange(s.RTPPortRange); err != nil {
		errs = append(errs, fmt.Errorf("plugins.sip.rtp_port_range: %w", err))
	}
	if _, _, err := ParsePortRange(s.SIPPortRange); err != nil {
		errs = append(errs, fmt.Errorf("plugins.sip.sip_port_range: %w", err))
	}
	for name, ip := range map[string]string{"local_ip": s.LocalIP, "sdp_ip": s.SDPIP} {
		if ip != "" && net.ParseIP(ip) == nil {
			errs = append(errs, fmt.Errorf("plugins.sip.%s: %q is not an IP address", name, ip))
		}
	}
	if s.RegisterTTL < 0 || s.KeepaliveInterval < 0 {
		errs = append(errs, fmt.Errorf("plugins.sip: register_ttl and keepalive_interval must not be negative"))
	}
	if s.SIPTimerT1x64 < 64 {
		errs = append(errs, fmt.Errorf("plugins.sip.sip_timer_t1x64: %d ms is below 64", s.SIPTimerT1x64))
	}
	return errs
}
