package config

import (
	"strings"
	"testing"
)

func TestClusterRelay(t *testing.T) {
	if errs := (ClusterRelay{Address: "10.0.0.1", Transport: "rtp"}).validate(); len(errs) != 0 {
		t.Errorf("plain RTP with an address: %v", errs)
	}
	for in, want := range map[string][2]uint16{"": {0, 0}, "7092": {7092, 7092}, "40000-40100": {40000, 40100}} {
		r := ClusterRelay{Ports: in, Transport: "srtp"}
		lo, hi, err := r.PortRange()
		if err != nil || lo != want[0] || hi != want[1] || len(r.validate()) != 0 {
			t.Errorf("ports %q: %d-%d, %v, %v", in, lo, hi, err, r.validate())
		}
	}
	for _, c := range []struct {
		r    ClusterRelay
		want string
	}{
		{ClusterRelay{Ports: "0", Transport: "srtp"}, "cluster.relay.ports"},
		{ClusterRelay{Ports: "9-3", Transport: "srtp"}, "cluster.relay.ports"},
		{ClusterRelay{Ports: "x", Transport: "srtp"}, "cluster.relay.ports"},
		{ClusterRelay{Address: "node-b", Transport: "srtp"}, "cluster.relay.address"},
		{ClusterRelay{Transport: "rtp"}, "cluster.relay.address"},
		{ClusterRelay{Transport: "udp"}, "cluster.relay.transport"},
		{ClusterRelay{Transport: ""}, "cluster.relay.transport"},
	} {
		errs := c.r.validate()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("%+v: %v, want %s", c.r, errs, c.want)
		}
	}
}

func TestClusterRelayInTheClusterBlock(t *testing.T) {
	if r := Default().Cluster.Relay; r.Transport != "srtp" || r.Address != "" || r.Ports != "" {
		t.Fatalf("defaults: %+v", r)
	}
	const on = "cluster: {enabled: true, secret: \"0123456789abcdef\", "
	c, err := Parse([]byte(on+"relay: {address: 10.0.0.2, ports: \"7092\", transport: rtp}}"), "test.yaml")
	if err != nil || c.Cluster.Relay.Address != "10.0.0.2" || c.Cluster.Relay.Transport != "rtp" {
		t.Fatalf("a plain relay: %+v %v", c, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{on + "relay: {transport: rtp}}", "cluster.relay.address"},
		{on + "relay: {ports: \"9-3\"}}", "cluster.relay.ports"},
		{on + "relay: {port: 7092}}", "port"},
	} {
		if _, err := Parse([]byte(tc.yaml), "test.yaml"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.yaml, err, tc.want)
		}
	}
}
