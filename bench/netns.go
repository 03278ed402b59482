package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
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
	// browser, when set, is a second namespace joined to the server's by its own veth pair: a
	// Chromium there reaches the server over a link of its own (see uplink.go).
	browser *browserLink
}

// browserLink is a namespace for a browser, joined to the server's namespace by a veth pair whose
// browser end carries the uplink's rate limit.
type browserLink struct {
	name      string
	browserIf string // veth end in the browser's namespace
	serverIf  string // veth end in the server's namespace
	browserIP string
	serverIP  string
	created   bool
	vethReady bool
}

// listenIP is the address servers listen on: this namespace's veth address, or every address when
// a browser namespace reaches the server over a second interface.
func (n *netns) listenIP() string {
	if n.browser != nil {
		return ""
	}
	return n.serverIP
}

// iceIf is the interface servers gather ICE candidates on: the browser's link when there is one.
func (n *netns) iceIf() string {
	if n.browser != nil {
		return n.browser.serverIf
	}
	return n.nsIf
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

// addBrowser creates the browser's namespace and its link to the server's (after up).
func (n *netns) addBrowser() error {
	pid := os.Getpid()
	sub := 20 + pid%200
	b := &browserLink{
		name:      n.name + "-b",
		browserIf: fmt.Sprintf("sb%db", pid%100000),
		serverIf:  fmt.Sprintf("sb%ds", pid%100000),
		browserIP: fmt.Sprintf("10.232.%d.1", sub),
		serverIP:  fmt.Sprintf("10.232.%d.2", sub),
	}
	n.browser = b
	steps := [][]string{
		{"netns", "add", b.name},
		{"-n", n.name, "link", "add", b.serverIf, "type", "veth", "peer", "name", b.browserIf, "netns", b.name},
		{"-n", n.name, "addr", "add", b.serverIP + "/24", "dev", b.serverIf},
		{"-n", n.name, "link", "set", b.serverIf, "up"},
		{"-n", b.name, "addr", "add", b.browserIP + "/24", "dev", b.browserIf},
		{"-n", b.name, "link", "set", b.browserIf, "up"},
		{"-n", b.name, "link", "set", "lo", "up"},
	}
	for i, args := range steps {
		if err := ip(args...); err != nil {
			return err
		}
		if i == 0 {
			b.created = true
		}
		if i == 1 {
			b.vethReady = true
		}
	}
	return nil
}

// limitUplink puts a token-bucket rate limit on what the browser sends (the egress of its veth
// end): rate in kbit/s, a bucket of burst bytes and a drop-tail queue of queue's worth of data at
// the rate (tbf's latency). tbf counts Ethernet frames.
func (b *browserLink) limitUplink(kbps int, burst int, queue time.Duration) error {
	args := []string{"-n", b.name, "qdisc", "replace", "dev", b.browserIf, "root"}
	args = append(args, tbfArgs(kbps, burst, queue)...)
	out, err := exec.Command("tc", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("tc %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func tbfArgs(kbps, burst int, queue time.Duration) []string {
	return []string{"tbf", "rate", fmt.Sprintf("%dkbit", kbps), "burst", fmt.Sprint(burst),
		"latency", fmt.Sprintf("%dms", queue.Milliseconds())}
}

// uplinkStats is tc's view of the rate limit: bytes and packets sent, dropped and overlimit since it
// was (re)placed.
func (b *browserLink) uplinkStats() string {
	out, err := exec.Command("tc", "-n", b.name, "-s", "qdisc", "show", "dev", b.browserIf).CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// queueSample is the rate limit's state at one moment (tc -s -j qdisc show).
type queueSample struct {
	At      time.Time `json:"at"`
	Backlog float64   `json:"backlog"` // bytes queued
	Packets float64   `json:"packets"` // sent, cumulative
	Drops   float64   `json:"drops"`   // cumulative
	Rate    float64   `json:"-"`       // bytes/s
}

// queue reads the rate limit's backlog and counters.
func (b *browserLink) queue() (queueSample, error) {
	out, err := exec.Command("tc", "-n", b.name, "-s", "-j", "qdisc", "show", "dev", b.browserIf).Output()
	if err != nil {
		return queueSample{}, err
	}
	return parseQueue(out)
}

func parseQueue(out []byte) (queueSample, error) {
	var qs []struct {
		Kind    string `json:"kind"`
		Options struct {
			Rate float64 `json:"rate"`
		} `json:"options"`
		Packets float64 `json:"packets"`
		Drops   float64 `json:"drops"`
		Backlog float64 `json:"backlog"`
	}
	if err := json.Unmarshal(out, &qs); err != nil {
		return queueSample{}, err
	}
	for _, q := range qs {
		if q.Kind == "tbf" {
			return queueSample{At: time.Now(), Backlog: q.Backlog, Packets: q.Packets, Drops: q.Drops, Rate: q.Options.Rate}, nil
		}
	}
	return queueSample{}, fmt.Errorf("no tbf in %s", out)
}

func (b *browserLink) down() error {
	if b == nil || !b.created {
		return nil
	}
	if out, err := exec.Command("ip", "netns", "pids", b.name).Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return fmt.Errorf("namespace %s still has processes %s; not deleting it", b.name, strings.Fields(string(out)))
	}
	b.created = false
	return ip("netns", "del", b.name) // takes its veth end, and with it the pair
}

// down deletes the namespace (and with it the veth pair). Processes still in it are ours only if
// we started them; the caller stops those first, so here any left are reported, not killed.
func (n *netns) down() error {
	if err := n.browser.down(); err != nil {
		return err
	}
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
