package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// NoSIP configures janus.plugin.nosip, the media bridge to plain-RTP peers whose signalling the
// application does itself (Janus's janus.plugin.nosip.jcfg).
type NoSIP struct {
	Enabled bool `yaml:"enabled"`
	// LocalIP is the address the RTP sockets bind to ("" all addresses).
	LocalIP string `yaml:"local_ip"`
	// SDPIP is the address written in the plain SDP, e.g. the public address behind a NAT ("":
	// local_ip, or the host's first non-loopback IPv4 address).
	SDPIP string `yaml:"sdp_ip"`
	// RTPPortRange is "min-max" for the RTP (even) and RTCP (odd) ports.
	RTPPortRange string `yaml:"rtp_port_range"`
	// DSCPAudioRTP and DSCPVideoRTP mark the RTP sent to the plain peer (0: unmarked).
	DSCPAudioRTP int `yaml:"dscp_audio_rtp"`
	DSCPVideoRTP int `yaml:"dscp_video_rtp"`
	// RecordingsDir is where `recording` writes its .mjr files; filenames stay inside it.
	RecordingsDir string `yaml:"recordings_dir"`
}

func (n NoSIP) validate() []error {
	var errs []error
	if _, _, err := ParsePortRange(n.RTPPortRange); err != nil {
		errs = append(errs, fmt.Errorf("plugins.nosip.rtp_port_range: %w", err))
	}
	for name, ip := range map[string]string{"local_ip": n.LocalIP, "sdp_ip": n.SDPIP} {
		if _, err := netip.ParseAddr(ip); ip != "" && err != nil {
			errs = append(errs, fmt.Errorf("plugins.nosip.%s: %w", name, err))
		}
	}
	for name, d := range map[string]int{"dscp_audio_rtp": n.DSCPAudioRTP, "dscp_video_rtp": n.DSCPVideoRTP} {
		if d < 0 || d > 63 {
			errs = append(errs, fmt.Errorf("plugins.nosip.%s: %d is not a DSCP value (0-63)", name, d))
		}
	}
	return errs
}

// ParsePortRange reads Janus's rtp_port_range, "min-max" (both within 1-65535, min <= max); ""
// and "0-0" mean any port the system gives.
func ParsePortRange(s string) (lo, hi uint16, err error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, "-")
	l, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 16)
	h, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 16)
	if !ok || err1 != nil || err2 != nil || l > h || (l == 0) != (h == 0) {
		return 0, 0, fmt.Errorf("%q is not a port range (min-max)", s)
	}
	return uint16(l), uint16(h), nil
}
