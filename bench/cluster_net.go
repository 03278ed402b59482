package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/clusterrig"
	"github.com/strata-rtc/strata/internal/rig"
)

// The cluster scenario measures the traffic between nodes in the kernel, not from the relay's own
// counters: an htb qdisc on every node's link (the egress of its end of the veth pair) sorts what
// the node sends by destination into classes whose counters are the bytes sent there — one class
// per other node, one for everything else (its clients, Redis), and on the limited step one for the
// apart subscriber's address, whose leaf is the rate limit (tbf, as the uplink scenario's). The
// classes' own rate is far above anything sent, so they only count. Bytes are whole frames
// (Ethernet, IP, UDP, SRTP headers and tags, RTCP, and the few node-to-node HTTP calls).

// htbFast is the rate of the counting classes: far above what one machine sends.
const htbFast = "10gbit"

// Class ids (minor numbers, hex in tc's syntax) of a node's link.
const (
	classOther = 0x1  // clients, Redis, anything else
	classApart = 0x99 // the apart subscriber's address (limited step)
)

// classToNode is node j's class on the others' links.
func classToNode(j int) int { return 0x10 + j }

func classID(minor int) string { return fmt.Sprintf("1:%x", minor) }

// linkLimit is the rate limit of the apart subscriber's link.
type linkLimit struct {
	addr  string
	kbps  int
	burst int
	queue time.Duration
}

// classifyLinks puts the counting classes on every node's link, and on node apartNode's (when
// limit is set) the apart subscriber's class behind its rate limit.
func classifyLinks(cl *clusterrig.Cluster, apartNode int, limit *linkLimit) error {
	for i, n := range cl.Nodes {
		_, dev := n.Link()
		tc := func(args ...string) error { return runTC(append([]string{"-n", n.NS}, args...)...) }
		if err := tc("qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", fmt.Sprintf("%x", classOther)); err != nil {
			return err
		}
		addClass := func(minor int) error {
			return tc("class", "add", "dev", dev, "parent", "1:", "classid", classID(minor), "htb", "rate", htbFast, "quantum", "60000")
		}
		match := func(addr string, minor int) error {
			return tc("filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "dst", addr+"/32", "flowid", classID(minor))
		}
		if err := addClass(classOther); err != nil {
			return err
		}
		for j, m := range cl.Nodes {
			if j == i {
				continue
			}
			if err := addClass(classToNode(j)); err != nil {
				return err
			}
			if err := match(m.IP, classToNode(j)); err != nil {
				return err
			}
		}
		if limit == nil || i != apartNode {
			continue
		}
		if err := addClass(classApart); err != nil {
			return err
		}
		if err := match(limit.addr, classApart); err != nil {
			return err
		}
		args := append([]string{"qdisc", "add", "dev", dev, "parent", classID(classApart), "handle", "99:"}, rig.TBFArgs(limit.kbps, limit.burst, limit.queue)...)
		if err := tc(args...); err != nil {
			return err
		}
	}
	return nil
}

func runTC(args ...string) error {
	out, err := exec.Command("tc", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("tc %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// classBytes reads the bytes sent through each class of a node's link.
func classBytes(n *clusterrig.Node) (map[string]uint64, error) {
	_, dev := n.Link()
	out, err := exec.Command("tc", "-n", n.NS, "-s", "class", "show", "dev", dev).Output()
	if err != nil {
		return nil, fmt.Errorf("tc class show on %s: %w", n.ID, err)
	}
	return parseClassBytes(string(out))
}

// parseClassBytes reads `tc -s class show`: each "class KIND ID ..." line, then its " Sent N bytes
// M pkt" line. Classes of a leaf qdisc (tbf's "30:1") have their own ids and are kept too.
func parseClassBytes(out string) (map[string]uint64, error) {
	got := map[string]uint64{}
	class := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "class":
			class = f[2]
		case len(f) >= 3 && f[0] == "Sent" && f[2] == "bytes" && class != "":
			v, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("tc class %s: %q is not a byte count", class, f[1])
			}
			got[class] = v
			class = ""
		}
	}
	return got, sc.Err()
}

// linkReading is every node's class counters at one moment: bytes[i][j] node i sent node j
// (i != j), apart what node i sent the apart subscriber.
type linkReading struct {
	at    time.Time
	bytes [][]uint64
	apart []uint64
}

func readLinks(cl *clusterrig.Cluster) (linkReading, error) {
	r := linkReading{at: time.Now(), bytes: make([][]uint64, len(cl.Nodes)), apart: make([]uint64, len(cl.Nodes))}
	for i, n := range cl.Nodes {
		got, err := classBytes(n)
		if err != nil {
			return r, err
		}
		r.bytes[i] = make([]uint64, len(cl.Nodes))
		for j := range cl.Nodes {
			if j != i {
				r.bytes[i][j] = got[classID(classToNode(j))]
			}
		}
		r.apart[i] = got[classID(classApart)]
	}
	return r, nil
}

// linkRates is the traffic between nodes over a window, Mbit/s: mbps[i][j] from node i to node j.
type linkRates struct {
	seconds float64
	mbps    [][]float64
	apart   []float64
}

// total is the traffic between all nodes, Mbit/s.
func (l linkRates) total() float64 {
	var t float64
	for _, row := range l.mbps {
		for _, v := range row {
			t += v
		}
	}
	return t
}

// ratesBetween is the rate of every counter from reading a to reading b.
func ratesBetween(a, b linkReading) linkRates {
	dt := b.at.Sub(a.at).Seconds()
	out := linkRates{seconds: dt, mbps: make([][]float64, len(b.bytes)), apart: make([]float64, len(b.apart))}
	rate := func(x, y uint64) float64 {
		if dt <= 0 || y < x {
			return 0
		}
		return float64(y-x) * 8 / dt / 1e6
	}
	for i := range b.bytes {
		out.mbps[i] = make([]float64, len(b.bytes[i]))
		for j := range b.bytes[i] {
			if i < len(a.bytes) && j < len(a.bytes[i]) {
				out.mbps[i][j] = rate(a.bytes[i][j], b.bytes[i][j])
			}
		}
		if i < len(a.apart) {
			out.apart[i] = rate(a.apart[i], b.apart[i])
		}
	}
	return out
}

// window picks the readings closest to the start and the end of [from, to] among readings taken
// in time order, and the rates between them; ok is false with fewer than two inside.
func window(readings []linkReading, from, to time.Time) (linkRates, bool) {
	first, last := -1, -1
	for i, r := range readings {
		if r.at.Before(from) || r.at.After(to) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	if first < 0 || last <= first {
		return linkRates{}, false
	}
	return ratesBetween(readings[first], readings[last]), true
}

// relayCounters are the relays' own counters summed over the nodes (the admin API's cluster verb:
// internal/cluster/relay's Stats), read after a step: packets sent on the links, and how many were
// asked for again and sent again from the origin's cache.
type relayCounters struct {
	PacketsSent   uint64 `json:"packets_sent"`
	NACKsReceived uint64 `json:"nacks_received"`
	Retransmitted uint64 `json:"retransmitted"`
	// KeyframeRequestsReceived came from edges to the origin, before it merged them.
	KeyframeRequestsReceived uint64 `json:"keyframe_requests_received"`
}

// readRelays sums every node's relay counters.
func readRelays(ctx context.Context, cl *clusterrig.Cluster) (relayCounters, error) {
	var sum relayCounters
	for _, n := range cl.Nodes {
		var r struct {
			Janus   string `json:"janus"`
			Cluster struct {
				Relay *relayCounters `json:"relay"`
			} `json:"cluster"`
		}
		if err := n.AdminRequest(ctx, map[string]any{"janus": "cluster"}, &r); err != nil {
			return sum, fmt.Errorf("%s: %w", n.ID, err)
		}
		if r.Janus != "success" || r.Cluster.Relay == nil {
			return sum, fmt.Errorf("%s: no relay in the cluster verb's answer (%q)", n.ID, r.Janus)
		}
		c := r.Cluster.Relay
		sum.PacketsSent += c.PacketsSent
		sum.NACKsReceived += c.NACKsReceived
		sum.Retransmitted += c.Retransmitted
		sum.KeyframeRequestsReceived += c.KeyframeRequestsReceived
	}
	return sum, nil
}
