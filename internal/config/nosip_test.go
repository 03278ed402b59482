package config

import (
	"strings"
	"testing"
)

func TestParsePortRange(t *testing.T) {
	for in, want := range map[string][2]uint16{"": {0, 0}, "0-0": {0, 0}, "10000-60000": {10000, 60000}, " 2000 - 2001 ": {2000, 2001}} {
		lo, hi, err := ParsePortRange(in)
		if err != nil || lo != want[0] || hi != want[1] {
			t.Errorf("%q: %d-%d %v", in, lo, hi, err)
		}
	}
	for _, in := range []string{"10000", "2-1", "0-100", "a-b", "1-70000"} {
		if _, _, err := ParsePortRange(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestBadNoSIPSectionIsRejected(t *testing.T) {
	for _, y := range []string{
		"plugins:\n  nosip:\n    rtp_port_range: 60000-10000\n",
		"plugins:\n  nosip:\n    local_ip: here\n",
		"plugins:\n  nosip:\n    dscp_audio_rtp: 64\n",
	} {
		if _, err := Parse([]byte(y), "test.yaml"); err == nil || !strings.Contains(err.Error(), "plugins.nosip.") {
			t.Errorf("%q: %v", y, err)
		}
	}
}
