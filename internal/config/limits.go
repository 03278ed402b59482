package config

import (
	"errors"
	"fmt"
	"net/netip"
)

// Limits bound what clients can make the server hold (general.limits). Each count is a maximum;
// 0 means unlimited where the reference configuration says so.
type Limits struct {
	// Sessions is the number of live sessions.
	Sessions int `yaml:"sessions"`
	// SessionsPerAddress is the number of live sessions created from one client IP address, except
	// for the addresses in UnlimitedAddresses.
	SessionsPerAddress int `yaml:"sessions_per_address"`
	// UnlimitedAddresses are client address prefixes (CIDR) that SessionsPerAddress does not apply
	// to: loopback by default, where a local load generator or a reverse proxy connects from.
	UnlimitedAddresses []string `yaml:"unlimited_addresses"`
	// HandlesPerSession is the number of handles one session can have attached.
	HandlesPerSession int `yaml:"handles_per_session"`
	// PeerConnections is the number of live PeerConnections.
	PeerConnections int `yaml:"peer_connections"`
	// OfferMedia is the number of m-lines a client's SDP offer may carry.
	OfferMedia int `yaml:"offer_media"`
	// RemoteCandidates is the number of distinct remote candidate transport addresses one
	// PeerConnection accepts, from its remote descriptions and trickles together; the candidates
	// trickled before the remote description (queued for it) count too, so this bounds that queue.
	RemoteCandidates int `yaml:"remote_candidates"`
	// TrickleCandidates is the number of entries one trickle request's candidates array may have.
	TrickleCandidates int `yaml:"trickle_candidates"`
}

// UnlimitedPrefixes parses UnlimitedAddresses (Validate has checked them).
func (l Limits) UnlimitedPrefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(l.UnlimitedAddresses))
	for _, s := range l.UnlimitedAddresses {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

func (l Limits) validate() []error {
	var errs []error
	for _, v := range []struct {
		name string
		n    int
	}{
		{"sessions", l.Sessions}, {"sessions_per_address", l.SessionsPerAddress},
		{"handles_per_session", l.HandlesPerSession}, {"peer_connections", l.PeerConnections},
		{"offer_media", l.OfferMedia}, {"remote_candidates", l.RemoteCandidates},
		{"trickle_candidates", l.TrickleCandidates},
	} {
		if v.n < 0 {
			errs = append(errs, fmt.Errorf("general.limits.%s: must not be negative (0 is unlimited)", v.name))
		}
	}
	for _, s := range l.UnlimitedAddresses {
		if _, err := netip.ParsePrefix(s); err != nil {
			errs = append(errs, fmt.Errorf("general.limits.unlimited_addresses: %q is not an address prefix like 127.0.0.0/8", s))
		}
	}
	// A PeerConnection needs at least one remote candidate (or a peer-reflexive one) to connect;
	// 0 would silently be "unlimited", which is the amplifier this limit exists to prevent.
	if l.RemoteCandidates == 0 {
		errs = append(errs, errors.New("general.limits.remote_candidates: must be positive"))
	}
	return errs
}

// VideoRoomLimits bound the videoroom (plugins.videoroom.limits); 0 is unlimited.
type VideoRoomLimits struct {
	// Rooms is the number of rooms, those of the configuration included.
	Rooms int `yaml:"rooms"`
	// ParticipantsPerRoom is the number of participants (joined as publishers, publishing or not).
	ParticipantsPerRoom int `yaml:"participants_per_room"`
	// SubscriptionsPerRoom is the number of subscriber handles joined to one room.
	SubscriptionsPerRoom int `yaml:"subscriptions_per_room"`
}

func (l VideoRoomLimits) validate() []error {
	if l.Rooms < 0 || l.ParticipantsPerRoom < 0 || l.SubscriptionsPerRoom < 0 {
		return []error{errors.New("plugins.videoroom.limits: must not be negative (0 is unlimited)")}
	}
	return nil
}
