package config

import (
	"strings"
	"testing"
)

func TestClusterRelay(t *testing.T) {
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
		{ClusterRelay{Transport: "rtp"}, "not implemented"},
		{ClusterRelay{Transport: ""}, "cluster.relay.transport"},
	} {
		errs := c.r.validate()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("%+v: %v, want %s", c.r, errs, c.want)
		}
	}
}
