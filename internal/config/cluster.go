package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// Cluster configures strata running as one node of several (internal/cluster, docs/CLUSTER.md).
type Cluster struct {
	Enabled bool `yaml:"enabled"`
	// Name prefixes every key and channel in Redis, so that clusters can share one Redis.
	Name string `yaml:"name"`
	// NodeID is unique in the cluster; empty: the host name (NodeName).
	NodeID string       `yaml:"node_id"`
	Redis  ClusterRedis `yaml:"redis"`
	// Listen is the cluster listener: node-to-node requests, plain HTTP.
	Listen    string           `yaml:"listen"`
	Advertise ClusterAdvertise `yaml:"advertise"`
	// Secret is the bearer of node-to-node requests, shared by every node.
	Secret    string        `yaml:"secret"`
	Heartbeat time.Duration `yaml:"heartbeat"`
	NodeTTL   time.Duration `yaml:"node_ttl"`
	LeaseTTL  time.Duration `yaml:"lease_ttl"`
	// MaxSessions is the node's limit on sessions (0: none): at it the node refuses create.
	MaxSessions int `yaml:"max_sessions"`
	// Relay is the media relay between nodes (clusterrelay.go).
	Relay ClusterRelay `yaml:"relay"`
}

// ClusterRedis is where the cluster's Redis is.
type ClusterRedis struct {
	Address  string `yaml:"address"`
	Password string `yaml:"password"`
	DB       int    `yaml:"db"`
}

// ClusterAdvertise are the URLs the other nodes use for this one; empty: derived from the
// listeners and the host name.
type ClusterAdvertise struct {
	API      string `yaml:"api"`
	WS       string `yaml:"ws"`
	Internal string `yaml:"internal"`
}

// NodeName is the node's id: node_id, or the host name when it is empty.
func (c Cluster) NodeName() string {
	if c.NodeID != "" {
		return c.NodeID
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "strata"
	}
	return host
}

func (c Cluster) validate() []error {
	var errs []error
	if c.MaxSessions < 0 {
		errs = append(errs, fmt.Errorf("cluster.max_sessions: %d is negative", c.MaxSessions))
	}
	if !c.Enabled {
		return errs
	}
	if c.Secret == "" {
		errs = append(errs, errors.New("cluster.secret: required when the cluster is enabled (it authenticates node-to-node requests)"))
	} else if IsSampleSecret(c.Secret) {
		errs = append(errs, errors.New("cluster.secret: a published sample secret; choose your own"))
	}
	if c.Name == "" || strings.ContainsAny(c.Name, " \t\r\n") {
		errs = append(errs, fmt.Errorf("cluster.name: %q must be a non-empty word", c.Name))
	}
	if strings.ContainsAny(c.NodeID, " \t\r\n") {
		errs = append(errs, fmt.Errorf("cluster.node_id: %q has white space", c.NodeID))
	}
	if _, _, err := net.SplitHostPort(c.Redis.Address); err != nil {
		errs = append(errs, fmt.Errorf("cluster.redis.address: %q: %v", c.Redis.Address, err))
	}
	if c.Redis.DB < 0 {
		errs = append(errs, fmt.Errorf("cluster.redis.db: %d is negative", c.Redis.DB))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("cluster.listen: %q: %v", c.Listen, err))
	}
	for _, a := range []struct{ option, url string }{
		{"cluster.advertise.api", c.Advertise.API}, {"cluster.advertise.ws", c.Advertise.WS},
		{"cluster.advertise.internal", c.Advertise.Internal},
	} {
		if a.url == "" {
			continue
		}
		u, err := url.Parse(a.url)
		if err != nil || u.Host == "" || !slices.Contains([]string{"http", "https", "ws", "wss"}, u.Scheme) {
			errs = append(errs, fmt.Errorf("%s: %q is not an absolute http(s) or ws(s) URL", a.option, a.url))
		}
	}
	if c.Heartbeat <= 0 {
		errs = append(errs, fmt.Errorf("cluster.heartbeat: %v must be positive", c.Heartbeat))
	}
	if c.NodeTTL <= c.Heartbeat {
		errs = append(errs, fmt.Errorf("cluster.node_ttl: %v must exceed the heartbeat %v (a live node's record would lapse)", c.NodeTTL, c.Heartbeat))
	}
	if c.LeaseTTL <= c.Heartbeat {
		errs = append(errs, fmt.Errorf("cluster.lease_ttl: %v must exceed the heartbeat %v (an owner's lease would lapse)", c.LeaseTTL, c.Heartbeat))
	}
	return append(errs, c.Relay.validate()...)
}
