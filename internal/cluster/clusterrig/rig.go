// Package clusterrig runs a strata cluster on one machine for tests and benchmarks: a real
// redis-server and N `strata serve` nodes, each node in a network namespace of its own, all joined
// by a bridge in this namespace, where the test's clients (Pion, Chromium) and Redis live. Nodes
// reach each other (proxying, the media relay) and Redis through the bridge, as machines on one
// LAN would; a node can be killed with SIGKILL and started again, Redis restarted empty.
package clusterrig

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/strata-rtc/strata/internal/rig"
)

// Ports every node listens on (inside its own namespace, on its own address).
const (
	APIPort      = 8088
	WSPort       = 8188
	AdminPort    = 7088
	ClusterPort  = 7090
	RedisPort    = 6379
	AdminSecret  = "clusterrig-admin"
	ClusterToken = "clusterrig-secret"
)

// Options describe the cluster to start.
type Options struct {
	Nodes int
	// Bin is the strata binary.
	Bin string
	// Dir holds the configurations and logs (a test's TempDir).
	Dir string
	// Extra is YAML merged over every node's generated configuration; NodeExtra over node i's.
	Extra     string
	NodeExtra func(i int) string
}

// Cluster is a running cluster; Close removes all of it.
type Cluster struct {
	opts   Options
	Bridge string
	// HostIP is the bridge's address: Redis listens there, clients reach the nodes from there.
	HostIP string
	Nodes  []*Node
	redis  *rig.Process
	dir    string
}

// Node is one strata node in its namespace.
type Node struct {
	Index int
	ID    string
	NS    string
	IP    string
	veth  string
	cfg   string
	log   string
	proc  *rig.Process
}

// API is the node's Janus HTTP API base URL; WS its WebSocket URL; Admin its admin API URL.
func (n *Node) API() string   { return fmt.Sprintf("http://%s:%d/janus", n.IP, APIPort) }
func (n *Node) WS() string    { return fmt.Sprintf("ws://%s:%d", n.IP, WSPort) }
func (n *Node) Admin() string { return fmt.Sprintf("http://%s:%d/admin", n.IP, AdminPort) }

// PID is the node's strata process (0 before it starts); `ip netns exec` execs strata, so it is
// strata's own.
func (n *Node) PID() int {
	if n.proc == nil {
		return 0
	}
	return n.proc.PID()
}

// Link names the node's veth pair: host is the end on the bridge (in this namespace), inner the
// node's end in its namespace, whose egress carries everything the node sends (to clients, to
// other nodes, to Redis).
func (n *Node) Link() (host, inner string) { return n.veth, n.veth + "i" }

// Log is the path of the node's output.
func (n *Node) Log() string { return n.log }

// Alive reports whether the node's process runs.
func (n *Node) Alive() bool { return n.proc != nil && n.proc.Alive() }

// Start brings up the bridge, Redis and every node, and waits until each node answers.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("clusterrig: needs root (network namespaces)")
	}
	pid := os.Getpid()
	sub := 20 + pid%200
	c := &Cluster{
		opts:   o,
		Bridge: fmt.Sprintf("scb%d", pid%100000),
		HostIP: fmt.Sprintf("10.233.%d.1", sub),
		dir:    o.Dir,
	}
	if err := c.up(ctx, sub); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) up(ctx context.Context, sub int) error {
	if err := run("ip", "link", "add", c.Bridge, "type", "bridge"); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"addr", "add", c.HostIP + "/24", "dev", c.Bridge},
		{"link", "set", c.Bridge, "up"},
	} {
		if err := run("ip", args...); err != nil {
			return err
		}
	}
	pid := os.Getpid() % 100000
	for i := range c.opts.Nodes {
		n := &Node{
			Index: i, ID: fmt.Sprintf("node%d", i+1),
			NS:   fmt.Sprintf("strata-cl-%d-%d", pid, i+1),
			IP:   fmt.Sprintf("10.233.%d.%d", sub, 11+i),
			veth: fmt.Sprintf("sc%dv%d", pid, i+1),
		}
		if err := c.addNamespace(n); err != nil {
			return err
		}
		c.Nodes = append(c.Nodes, n)
	}
	if err := c.StartRedis(); err != nil {
		return err
	}
	for _, n := range c.Nodes {
		if err := c.writeConfig(n); err != nil {
			return err
		}
	}
	errs := make(chan error, len(c.Nodes))
	for _, n := range c.Nodes {
		go func() { errs <- c.StartNode(ctx, n.Index) }()
	}
	var first error
	for range c.Nodes {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	wait, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return c.WaitMembers(wait)
}

// addNamespace creates the node's namespace and its veth pair to the bridge.
func (c *Cluster) addNamespace(n *Node) error {
	inner := n.veth + "i"
	steps := [][]string{
		{"netns", "add", n.NS},
		{"link", "add", n.veth, "type", "veth", "peer", "name", inner, "netns", n.NS},
		{"link", "set", n.veth, "master", c.Bridge},
		{"link", "set", n.veth, "up"},
		{"-n", n.NS, "addr", "add", n.IP + "/24", "dev", inner},
		{"-n", n.NS, "link", "set", inner, "up"},
		{"-n", n.NS, "link", "set", "lo", "up"},
		{"-n", n.NS, "route", "add", "default", "via", c.HostIP},
	}
	for _, args := range steps {
		if err := run("ip", args...); err != nil {
			return err
		}
	}
	return nil
}

// NodeIndex is the index of the node called id, -1 if none is.
func (c *Cluster) NodeIndex(id string) int {
	for i, n := range c.Nodes {
		if n.ID == id {
			return i
		}
	}
	return -1
}

// RedisAddr is where the nodes find Redis.
func (c *Cluster) RedisAddr() string { return fmt.Sprintf("%s:%d", c.HostIP, RedisPort) }

// StartRedis starts redis-server on the bridge's address, empty and without persistence.
func (c *Cluster) StartRedis() error {
	dir := filepath.Join(c.dir, "redis")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command("redis-server", "--bind", c.HostIP, "--port", fmt.Sprint(RedisPort),
		"--save", "", "--appendonly", "no", "--dir", dir, "--protected-mode", "no")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p, err := rig.StartCommand("redis-server", cmd, filepath.Join(dir, "redis.log"))
	if err != nil {
		return err
	}
	c.redis = p
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if out, err := exec.Command("redis-cli", "-h", c.HostIP, "-p", fmt.Sprint(RedisPort), "ping").Output(); err == nil && strings.TrimSpace(string(out)) == "PONG" {
			return nil
		}
		if !p.Alive() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("redis-server did not answer on %s: %s", c.RedisAddr(), rig.Tail(p.Log))
}

// KillRedis ends Redis with SIGKILL: everything it held is gone.
func (c *Cluster) KillRedis() {
	if c.redis != nil {
		c.redis.Kill()
	}
}

// RestartRedis kills Redis and starts it again, empty, as after a crash.
func (c *Cluster) RestartRedis() error {
	c.KillRedis()
	return c.StartRedis()
}

// StartNode starts node i (again) and waits until its API answers; RestartNode also waits until
// every node sees it.
func (c *Cluster) StartNode(ctx context.Context, i int) error {
	n := c.Nodes[i]
	cmd := exec.Command("ip", "netns", "exec", n.NS, c.opts.Bin, "serve", "-config", n.cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p, err := rig.StartCommand(n.ID, cmd, n.log)
	if err != nil {
		return err
	}
	n.proc = p
	return p.WaitHTTP(ctx, http.DefaultClient, n.API()+"/info")
}

func (c *Cluster) RestartNode(ctx context.Context, i int) error {
	if err := c.StartNode(ctx, i); err != nil {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return c.WaitMembers(wait)
}

// Kill ends node i with SIGKILL, as a crash would.
func (c *Cluster) Kill(i int) {
	if p := c.Nodes[i].proc; p != nil {
		p.Kill()
	}
}

// Stop ends node i with SIGTERM.
func (c *Cluster) Stop(i int) error {
	if p := c.Nodes[i].proc; p != nil {
		return p.Stop(rig.StopGrace)
	}
	return nil
}

// Close stops every node and Redis and removes the namespaces and the bridge.
func (c *Cluster) Close() {
	for i := range c.Nodes {
		_ = c.Stop(i)
	}
	if c.redis != nil {
		_ = c.redis.Stop(rig.StopGrace)
	}
	for _, n := range c.Nodes {
		_ = run("ip", "link", "del", n.veth)
		_ = run("ip", "netns", "del", n.NS)
	}
	_ = run("ip", "link", "del", c.Bridge)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
