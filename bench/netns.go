package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// netns is a private network namespace joined to this one by a veth pair. The server under test
// runs inside it, so its interface counters measure its traffic alone, no other server on the
// machine can collide with its ports, and ICE (which ignores loopback in Janus) has a real
// interface. The load generator stays outside and reaches it through the veth.
type netns struct {
	name      string
	hostIf    string // veth end in this namespace
	nsIf      string // veth end inside
	hostIP    string
	serverIP  string
	created   bool
	vethReady bool
}

// newNetns names a namespace after this process, so concurrent or crashed runs never collide.
func newNetns() *netns {
	pid := os.Getpid()
	sub := 20 + pid%200
	return &netns{
		name:     fmt.Sprintf("strata-bench-%d", pid),
		hostIf:   fmt.Sprintf("sb%dh", pid%100000),
		nsIf:     fmt.Sprintf("sb%dn", pid%100000),
		hostIP:   fmt.Sprintf("10.231.%d.1", sub),
		serverIP: fmt.Sprintf("10.231.%d.2", sub),
	}
}

func (n *netns) up() error {
	steps := [][]string{
		{"netns", "add", n.name},
		{"link", "add", n.hostIf, "type", "veth", "peer", "name", n.nsIf, "netns", n.name},
		{"addr", "add", n.hostIP + "/24", "dev", n.hostIf},
		{"link", "set", n.hostIf, "up"},
		{"-n", n.name, "addr", "add", n.serverIP + "/24", "dev", n.nsIf},
		{"-n", n.name, "link", "set", n.nsIf, "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
	}
	for i, args := range steps {
		if err := ip(args...); err != nil {
			return err
		}
		if i == 0 {
			n.created = true
		}
		if i == 1 {
			n.vethReady = true
		}
	}
	return nil
}

// down deletes the namespace (and with it the veth pair). Processes still in it are ours only if
// we started them; the caller stops those first, so here any left are reported, not killed.
func (n *netns) down() error {
	if !n.created {
		return nil
	}
	if out, err := exec.Command("ip", "netns", "pids", n.name).Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return fmt.Errorf("namespace %s still has processes %s; not deleting it", n.name, strings.Fields(string(out)))
	}
	if n.vethReady {
		_ = ip("link", "del", n.hostIf) // deleting one end removes both
	}
	n.created = false
	return ip("netns", "del", n.name)
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
