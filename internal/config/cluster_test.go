package config

import (
	"strings"
	"testing"
	"time"
)

func TestClusterDefaults(t *testing.T) {
	c := Default().Cluster
	if c.Enabled || c.Name != "strata" || c.Listen != ":7090" || c.Redis.Address != "127.0.0.1:6379" ||
		c.Heartbeat != time.Second || c.NodeTTL != 3*time.Second || c.LeaseTTL != 3*time.Second || c.MaxSessions != 0 {
		t.Fatalf("defaults: %+v", c)
	}
	if c.NodeName() == "" {
		t.Fatal("no node name from the host name")
	}
	c.NodeID = "n1"
	if c.NodeName() != "n1" {
		t.Fatalf("node_id ignored: %s", c.NodeName())
	}
}

func TestClusterValidation(t *testing.T) {
	const on = "cluster: {enabled: true, secret: \"0123456789abcdef\", "
	if _, err := Parse([]byte(on+"node_id: n1}"), "test.yaml"); err != nil {
		t.Fatalf("a valid cluster: %v", err)
	}
	// Disabled, the block's values are not checked (beyond max_sessions), so the defaults stand.
	if _, err := Parse([]byte("cluster: {secret: \"\", heartbeat: 5s}"), "test.yaml"); err != nil {
		t.Fatalf("disabled cluster: %v", err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"cluster: {enabled: true}", "cluster.secret"},
		{"cluster: {enabled: true, secret: janusrocks}", "cluster.secret"},
		{on + "name: \"\"}", "cluster.name"},
		{on + "name: \"a b\"}", "cluster.name"},
		{on + "node_id: \"a b\"}", "cluster.node_id"},
		{on + "redis: {address: nohost}}", "cluster.redis.address"},
		{on + "redis: {address: \"127.0.0.1:6379\", db: -1}}", "cluster.redis.db"},
		{on + "listen: \"7090\"}", "cluster.listen"},
		{on + "advertise: {api: \"node1/janus\"}}", "cluster.advertise.api"},
		{on + "advertise: {internal: \"ftp://node1:7090\"}}", "cluster.advertise.internal"},
		{on + "heartbeat: 0s}", "cluster.heartbeat"},
		{on + "node_ttl: 1s}", "cluster.node_ttl"},
		{on + "lease_ttl: 500ms}", "cluster.lease_ttl"},
		{"cluster: {max_sessions: -1}", "cluster.max_sessions"},
		{"cluster: {relays: 1}", "relays"},
	} {
		_, err := Parse([]byte(tc.yaml), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.yaml, err, tc.want)
		}
	}
}
