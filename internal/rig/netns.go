// Package rig runs servers under test, strata and Debian's Janus, each in a private network
// namespace with a generated configuration: what the benchmarks (./bench) and the abuse probes
// (./chaos) share.
package rig

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Netns is a private network namespace joined to this one by a veth pair. The server under test
// runs inside it, so its interface counters measure its traffic alone, no other server on the
// machine can collide with its ports, and ICE (which ignores loopback in Janus) has a real
// interface. The load generator stays outside and reaches it through the veth.
type Netns struct {
	Name      string
	HostIf    string // veth end in this namespace
	NsIf      string // veth end inside
	HostIP    string
	ServerIP  string
	created   bool
	vethReady bool
	// browser, when set, is a second namespace joined to the server's by its own veth pair: a
	// Chromium there reaches the server over a link of its own (see uplink.go).
	Browser *BrowserLink
}

// BrowserLink is a namespace for a browser, joined to the server's namespace by a veth pair whose
// browser end carries the uplink's rate limit.
type BrowserLink struct {
	Name      string
	BrowserIf string // veth end in the browser's namespace
	ServerIf  string // veth end in the server's namespace
	BrowserIP string
	ServerIP  string
	created   bool
	vethReady bool
}

// ListenIP is the address servers listen on: this namespace's veth address, or every address when
// a browser namespace reaches the server over a second interface.
func (n *Netns) ListenIP() string {
	if n.Browser != nil {
		return ""
	}
	return n.ServerIP
}

// ICEIf is the interface servers gather ICE candidates on: the browser's link when there is one.
func (n *Netns) ICEIf() string {
	if n.Browser != nil {
		return n.Browser.ServerIf
	}
	return n.NsIf
}

// NewNetns names a namespace after kind ("bench", "chaos") and this process, so concurrent or
// crashed runs never collide.
func NewNetns(kind string) *Netns {
	pid := os.Getpid()
	sub := 20 + pid%200
	return &Netns{
		Name:     fmt.Sprintf("strata-%s-%d", kind, pid),
		HostIf:   fmt.Sprintf("sb%dh", pid%100000),
		NsIf:     fmt.Sprintf("sb%dn", pid%100000),
		HostIP:   fmt.Sprintf("10.231.%d.1", sub),
		ServerIP: fmt.Sprintf("10.231.%d.2", sub),
	}
}

func (n *Netns) Up() error {
	steps := [][]string{
		{"netns", "add", n.Name},
		{"link", "add", n.HostIf, "type", "veth", "peer", "name", n.NsIf, "netns", n.Name},
		{"addr", "add", n.HostIP + "/24", "dev", n.HostIf},
		{"link", "set", n.HostIf, "up"},
		{"-n", n.Name, "addr", "add", n.ServerIP + "/24", "dev", n.NsIf},
		{"-n", n.Name, "link", "set", n.NsIf, "up"},
		{"-n", n.Name, "link", "set", "lo", "up"},
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

// AddBrowser creates the browser's namespace and its link to the server's (after up).
func (n *Netns) AddBrowser() error {
	pid := os.Getpid()
	sub := 20 + pid%200
	b := &BrowserLink{
		Name:      n.Name + "-b",
		BrowserIf: fmt.Sprintf("sb%db", pid%100000),
		ServerIf:  fmt.Sprintf("sb%ds", pid%100000),
		BrowserIP: fmt.Sprintf("10.232.%d.1", sub),
		ServerIP:  fmt.Sprintf("10.232.%d.2", sub),
	}
	n.Browser = b
	steps := [][]string{
		{"netns", "add", b.Name},
		{"-n", n.Name, "link", "add", b.ServerIf, "type", "veth", "peer", "name", b.BrowserIf, "netns", b.Name},
		{"-n", n.Name, "addr", "add", b.ServerIP + "/24", "dev", b.ServerIf},
		{"-n", n.Name, "link", "set", b.ServerIf, "up"},
		{"-n", b.Name, "addr", "add", b.BrowserIP + "/24", "dev", b.BrowserIf},
		{"-n", b.Name, "link", "set", b.BrowserIf, "up"},
		{"-n", b.Name, "link", "set", "lo", "up"},
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

// LimitUplink puts a token-bucket rate limit on what the browser sends (the egress of its veth
// end): rate in kbit/s, a bucket of burst bytes and a drop-tail queue of queue's worth of data at
// the rate (tbf's latency). tbf counts Ethernet frames.
func (b *BrowserLink) LimitUplink(kbps int, burst int, queue time.Duration) error {
	args := []string{"-n", b.Name, "qdisc", "replace", "dev", b.BrowserIf, "root"}
	args = append(args, TBFArgs(kbps, burst, queue)...)
	out, err := exec.Command("tc", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("tc %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func TBFArgs(kbps, burst int, queue time.Duration) []string {
	return []string{"tbf", "rate", fmt.Sprintf("%dkbit", kbps), "burst", fmt.Sprint(burst),
		"latency", fmt.Sprintf("%dms", queue.Milliseconds())}
}

// UplinkStats is tc's view of the rate limit: bytes and packets sent, dropped and overlimit since it
// was (re)placed.
func (b *BrowserLink) UplinkStats() string {
	out, err := exec.Command("tc", "-n", b.Name, "-s", "qdisc", "show", "dev", b.BrowserIf).CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// QueueSample is the rate limit's state at one moment (tc -s -j qdisc show).
type QueueSample struct {
	At      time.Time `json:"at"`
	Backlog float64   `json:"backlog"` // bytes queued
	Packets float64   `json:"packets"` // sent, cumulative
	Drops   float64   `json:"drops"`   // cumulative
	Rate    float64   `json:"-"`       // bytes/s
}

// Queue reads the rate limit's backlog and counters.
func (b *BrowserLink) Queue() (QueueSample, error) {
	out, err := exec.Command("tc", "-n", b.Name, "-s", "-j", "qdisc", "show", "dev", b.BrowserIf).Output()
	if err != nil {
		return QueueSample{}, err
	}
	return ParseQueue(out)
}

func ParseQueue(out []byte) (QueueSample, error) {
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
		return QueueSample{}, err
	}
	for _, q := range qs {
		if q.Kind == "tbf" {
			return QueueSample{At: time.Now(), Backlog: q.Backlog, Packets: q.Packets, Drops: q.Drops, Rate: q.Options.Rate}, nil
		}
	}
	return QueueSample{}, fmt.Errorf("no tbf in %s", out)
}

func (b *BrowserLink) Down() error {
	if b == nil || !b.created {
		return nil
	}
	if out, err := exec.Command("ip", "netns", "pids", b.Name).Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return fmt.Errorf("namespace %s still has processes %s; not deleting it", b.Name, strings.Fields(string(out)))
	}
	b.created = false
	return ip("netns", "del", b.Name) // takes its veth end, and with it the pair
}

// Down deletes the namespace (and with it the veth pair). Processes still in it are ours only if
// we started them; the caller stops those first, so here any left are reported, not killed.
func (n *Netns) Down() error {
	if err := n.Browser.Down(); err != nil {
		return err
	}
	if !n.created {
		return nil
	}
	if out, err := exec.Command("ip", "netns", "pids", n.Name).Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return fmt.Errorf("namespace %s still has processes %s; not deleting it", n.Name, strings.Fields(string(out)))
	}
	if n.vethReady {
		_ = ip("link", "del", n.HostIf) // deleting one end removes both
	}
	n.created = false
	return ip("netns", "del", n.Name)
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
