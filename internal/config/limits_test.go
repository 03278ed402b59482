package config

import (
	"net/netip"
	"strings"
	"testing"
)

func TestLimitsDefaults(t *testing.T) {
	l := Default().General.Limits
	if l.Sessions <= 0 || l.SessionsPerAddress <= 0 || l.RemoteCandidates <= 0 || l.OfferMedia <= 0 || l.TrickleCandidates <= 0 {
		t.Errorf("limits %+v: every default should bound something", l)
	}
	// strata load and make bench run from loopback: they must not meet sessions_per_address.
	for _, a := range []string{"127.0.0.1", "::1"} {
		covered := false
		for _, p := range l.UnlimitedPrefixes() {
			covered = covered || p.Contains(netip.MustParseAddr(a))
		}
		if !covered {
			t.Errorf("%s is not in unlimited_addresses %v", a, l.UnlimitedAddresses)
		}
	}
}

func TestBadLimitsAreRejected(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"general: {limits: {sessions: -1}}", "general.limits.sessions"},
		{"general: {limits: {remote_candidates: 0}}", "general.limits.remote_candidates"},
		{"general: {limits: {unlimited_addresses: [\"localhost\"]}}", "general.limits.unlimited_addresses"},
		{"general: {limits: {unlimited_addresses: [\"10.0.0.1\"]}}", "general.limits.unlimited_addresses"},
		{"plugins: {videoroom: {limits: {participants_per_room: -5}}}", "plugins.videoroom.limits"},
	} {
		_, err := Parse([]byte(tc.yaml), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.yaml, err, tc.want)
		}
	}
	c, err := Parse([]byte("general: {limits: {sessions: 0, unlimited_addresses: [\"10.0.0.0/8\"]}}"), "test.yaml")
	if err != nil {
		t.Fatalf("0 (unlimited) sessions and a private prefix: %v", err)
	}
	if p := c.General.Limits.UnlimitedPrefixes(); len(p) != 1 || !p[0].Contains(netip.MustParseAddr("10.1.2.3")) {
		t.Errorf("prefixes %v", p)
	}
}
