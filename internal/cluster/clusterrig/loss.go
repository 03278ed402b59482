package clusterrig

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// lossTable is the nftables table a Loss puts in a node's namespace.
const lossTable = "clusterrig_loss"

// Loss makes the link between two nodes lose a share of its UDP packets each way, as a lossy
// network between two machines would: in each node's namespace an nftables rule drops that share,
// chosen by the kernel at random (numgen random), of the UDP that arrives from the other node.
// Dropping on input, not output, keeps the sender unaware: a packet dropped on output fails the
// sender's write, which no real link does. TCP (Redis, the nodes' HTTP calls) is left alone.
type Loss struct {
	nodes [2]*Node
}

// LoseBetween makes the link between nodes i and j lose percent of its UDP packets each way,
// until Remove. It needs nft (Debian's nftables).
func (c *Cluster) LoseBetween(i, j, percent int) (*Loss, error) {
	if i == j || i < 0 || j < 0 || i >= len(c.Nodes) || j >= len(c.Nodes) {
		return nil, fmt.Errorf("clusterrig: no link between nodes %d and %d of %d", i, j, len(c.Nodes))
	}
	if percent < 0 || percent > 100 {
		return nil, fmt.Errorf("clusterrig: loss of %d %%", percent)
	}
	l := &Loss{nodes: [2]*Node{c.Nodes[i], c.Nodes[j]}}
	for k, n := range l.nodes {
		from := l.nodes[1-k].IP
		rules := fmt.Sprintf(`table inet %[1]s {
	chain input {
		type filter hook input priority 0; policy accept;
		ip saddr %[2]s meta l4proto udp counter
		ip saddr %[2]s meta l4proto udp numgen random mod 100 < %[3]d counter drop
	}
}
`, lossTable, from, percent)
		if err := nft(n.NS, rules, "-f", "-"); err != nil {
			l.Remove()
			return nil, err
		}
	}
	return l, nil
}

// LossCounts are the UDP packets that arrived at the two nodes from each other and how many of
// them the rule dropped.
type LossCounts struct{ Arrived, Dropped uint64 }

// counterRe finds the rules' counters in nft's listing, in rule order (arrived, dropped).
var counterRe = regexp.MustCompile(`counter packets (\d+) bytes \d+`)

// Counts sums the counters of both nodes' rules.
func (l *Loss) Counts() (LossCounts, error) {
	var sum LossCounts
	for _, n := range l.nodes {
		out, err := exec.Command("ip", "netns", "exec", n.NS, "nft", "list", "table", "inet", lossTable).CombinedOutput()
		if err != nil {
			return sum, fmt.Errorf("clusterrig: nft list in %s: %v: %s", n.NS, err, strings.TrimSpace(string(out)))
		}
		c, err := parseLossCounters(string(out))
		if err != nil {
			return sum, fmt.Errorf("clusterrig: %s: %w", n.NS, err)
		}
		sum.Arrived += c.Arrived
		sum.Dropped += c.Dropped
	}
	return sum, nil
}

// parseLossCounters reads the two counters of a loss table's listing.
func parseLossCounters(listing string) (LossCounts, error) {
	m := counterRe.FindAllStringSubmatch(listing, -1)
	if len(m) != 2 {
		return LossCounts{}, fmt.Errorf("%d counters in the loss table, want 2", len(m))
	}
	a, _ := strconv.ParseUint(m[0][1], 10, 64)
	d, _ := strconv.ParseUint(m[1][1], 10, 64)
	return LossCounts{Arrived: a, Dropped: d}, nil
}

// Remove takes the loss away (from a node that is gone, there is nothing to remove).
func (l *Loss) Remove() error {
	var first error
	for _, n := range l.nodes {
		if err := nft(n.NS, "", "delete", "table", "inet", lossTable); err != nil && first == nil && !strings.Contains(err.Error(), "No such file") {
			first = err
		}
	}
	return first
}

// nft runs nft in namespace ns with stdin.
func nft(ns, stdin string, args ...string) error {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, "nft"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("clusterrig: nft %s in %s: %v: %s", strings.Join(args, " "), ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}
