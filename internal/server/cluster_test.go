package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/redistest"
	"github.com/strata-rtc/strata/internal/config"
)

// clusterConfig is testConfig as node id of the cluster on redisAddr, with short periods.
func clusterConfig(t *testing.T, redisAddr, id string) *config.Config {
	cfg := testConfig(t)
	cfg.Transports.Admin.Metrics = true
	c := &cfg.Cluster
	c.Enabled, c.NodeID, c.Secret, c.Listen = true, id, "cluster-test-secret", "127.0.0.1:0"
	c.Redis.Address = redisAddr
	c.Heartbeat, c.NodeTTL, c.LeaseTTL = 100*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond
	return cfg
}

func adminCluster(t *testing.T, s *Server, verb string) map[string]any {
	t.Helper()
	m := post(t, "http://"+s.AdminAddr()+"/admin", `{"janus":"`+verb+`","transaction":"c","admin_secret":"`+testAdminSecret+`"}`)
	if m["janus"] != "success" {
		t.Fatalf("%s: %v", verb, m)
	}
	c, _ := m["cluster"].(map[string]any)
	return c
}

func TestClusterAdminAndMetrics(t *testing.T) {
	redis := redistest.Start(t)
	s1 := startServer(t, clusterConfig(t, redis.Addr(), "n1"))
	s2 := startServer(t, clusterConfig(t, redis.Addr(), "n2"))

	var c map[string]any
	deadline := time.Now().Add(3 * time.Second)
	for {
		c = adminCluster(t, s1, "cluster")
		// n2 is in the cluster from New, with its bound addresses from Start: wait for those.
		if nodes, _ := c["nodes"].([]any); len(nodes) == 2 && nodes[1].(map[string]any)["internal"] == "http://"+s2.Addr(Cluster) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("n1 never saw n2: %v", c)
		}
		time.Sleep(20 * time.Millisecond)
	}
	self, _ := c["self"].(map[string]any)
	if c["enabled"] != true || c["connected"] != true || c["accepting"] != true || self["id"] != "n1" || self["state"] != "serving" {
		t.Fatalf("cluster: %v", c)
	}
	// n2 advertises its bound ports: its cluster listener answers there, and only with the secret.
	n2 := c["nodes"].([]any)[1].(map[string]any)
	if n2["id"] != "n2" || n2["internal"] != "http://"+s2.Addr(Cluster) || n2["api"] != "http://"+s2.HTTPAddr()+"/janus" ||
		n2["ws"] != "ws://"+s2.WSAddr() {
		t.Fatalf("n2 as n1 sees it: %v (cluster listener %s)", n2, s2.Addr(Cluster))
	}
	resp, err := http.Post(n2["internal"].(string)+"/anything", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("cluster listener without the secret: %s", resp.Status)
	}

	sc := scrapeMetrics(t, s1)
	expect(t, sc, 2, "strata_cluster_nodes")
	expect(t, sc, 1, "strata_cluster_connected")
	// n1, up first, owns the videoroom's two configured rooms (1234, 5678).
	expect(t, sc, 2, "strata_cluster_leases_held")
	// The relay's series are there (the sample rtp mountpoints are offered to the other node),
	// nothing relayed yet.
	if v := sc.value("strata_cluster_relay_feeds", "direction=export"); v < 1 {
		t.Errorf("strata_cluster_relay_feeds{direction=export} = %v, want the sample rtp mountpoints", v)
	}
	expect(t, sc, 0, "strata_cluster_relay_packets_total", "direction=sent")

	// Drain n2: it says so, refuses sessions, and n1 sees it draining.
	if d := adminCluster(t, s2, "drain"); d["state"] != "draining" {
		t.Fatalf("drain: %v", d)
	}
	if ok, why := s2.ClusterNode().Accepting(); ok || why == "" {
		t.Fatalf("drained node accepting: %v %q", ok, why)
	}
	deadline = time.Now().Add(3 * time.Second)
	for {
		r, ok := s1.ClusterNode().Node("n2")
		if ok && r.State == "draining" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("n1 never saw n2 draining: %+v", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// n2 shuts down: n1 sees it gone at once (its record is deleted, not left to lapse).
	s2.Close()
	deadline = time.Now().Add(3 * time.Second)
	for len(s1.ClusterNode().Nodes()) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("n1 still sees n2 after its shutdown")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNoCluster(t *testing.T) {
	s := startServer(t, testConfig(t))
	if s.ClusterNode() != nil || s.view != nil || s.Addr(Cluster) != "" {
		t.Fatal("a cluster without cluster.enabled")
	}
	if c := adminCluster(t, s, "cluster"); c["enabled"] != false {
		t.Fatalf("cluster verb without a cluster: %v", c)
	}
	m := post(t, "http://"+s.AdminAddr()+"/admin", `{"janus":"drain","transaction":"d","admin_secret":"`+testAdminSecret+`"}`)
	if e, _ := m["error"].(map[string]any); e == nil || !strings.Contains(e["reason"].(string), "cluster") {
		t.Fatalf("drain without a cluster: %v", m)
	}
}

func TestClusterUnreachableRedis(t *testing.T) {
	redis := redistest.Start(t)
	addr := redis.Addr()
	redis.Stop()
	_, err := New(clusterConfig(t, addr, "n1"), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("joining a cluster whose Redis is down: %v", err)
	}
}
