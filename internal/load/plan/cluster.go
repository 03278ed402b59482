package plan

import (
	"fmt"
	"net"
	"slices"
)

// Apart sets the last subscriber apart from the others, for a run that puts it alone behind a
// limited link (the cluster benchmark's tc rate limit on one node's link, matching its address):
// it joins Servers[Server] and gathers ICE candidates on Address only, a local address of its
// own that the other clients then leave alone.
type Apart struct {
	// Address is the apart subscriber's local IP address; empty: no subscriber is apart.
	Address string `yaml:"address"`
	// Server is the index, in ServerList, of the server it joins.
	Server int `yaml:"server"`
}

// Set reports whether a subscriber is apart.
func (a Apart) Set() bool { return a.Address != "" }

// ServerList is every server the run's clients use: Servers when given (a cluster's nodes), or
// the one Server.
func (p *Plan) ServerList() []string {
	if len(p.Servers) > 0 {
		return p.Servers
	}
	return []string{p.Server}
}

// Home is the server the publishers join and the room is created on: the first of ServerList.
func (p *Plan) Home() string { return p.ServerList()[0] }

// SubscriberServer is the index in ServerList of the server receive-only subscriber i (0-based,
// in joining order) joins: round-robin over every server, so each node of a cluster serves an
// equal share; the apart subscriber (the last) joins Apart.Server.
func (p *Plan) SubscriberServer(i int) int {
	if p.Apart.Set() && i == p.Subscribers-1 {
		return p.Apart.Server
	}
	return i % len(p.ServerList())
}

// validateCluster checks Servers and Apart: a videoroom run only (the audio bridge, streaming and
// SIP runs keep to one server), every URL well formed and listed once, Server (when also given)
// the first of them, and an apart subscriber that exists, on a listed server, at an IP address.
func (p *Plan) validateCluster(v *validation) {
	if len(p.Servers) > 0 && (p.IsAudioBridge() || p.IsStreaming() || p.IsSIP()) {
		v.bad("servers", "only a videoroom run spreads over several servers")
	}
	for i, s := range p.Servers {
		if err := checkServer(s); err != nil {
			v.bad(fmt.Sprintf("servers[%d]", i), "%v", err)
		}
		if slices.Index(p.Servers, s) < i {
			v.bad(fmt.Sprintf("servers[%d]", i), "%q is listed twice", s)
		}
	}
	if len(p.Servers) > 0 && p.Server != "" && p.Server != p.Servers[0] {
		v.bad("server", "%q is not the first of servers (%q), where publishers join; leave it out", p.Server, p.Servers[0])
	}
	if !p.Apart.Set() {
		return
	}
	if net.ParseIP(p.Apart.Address) == nil {
		v.bad("apart.address", "%q is not an IP address", p.Apart.Address)
	}
	if n := len(p.ServerList()); p.Apart.Server < 0 || p.Apart.Server >= n {
		v.bad("apart.server", "%d is outside 0…%d (the servers listed)", p.Apart.Server, n-1)
	}
	if p.Subscribers < 1 {
		v.bad("apart", "needs a subscriber to set apart")
	}
}
