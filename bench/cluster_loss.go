package main

import (
	"fmt"
	"strings"

	"github.com/strata-rtc/strata/internal/load/report"
)

// The cluster scenario's lossy step: two nodes whose link loses clusterLossPercent of its UDP each
// way (an nftables rule in each node's namespace drops that share of what arrives from the other,
// at random: clusterrig's LoseBetween), under the two-node step's load. Node 1's subscribers are
// served as a single node serves them; node 2's get the feed across the lossy link, which node 2
// repairs by asking node 1 again (NACK) and node 1 answers from its Receiver's cache. The step
// compares node 2's subscribers with node 1's, and with node 2's in the two-node step.

// clusterLossPercent is the lossy link's loss each way (issue 21's 5 %).
const clusterLossPercent = 5

// lossyPair is the lossy step and the step of as many nodes without loss.
func lossyPair(o *outcome) (base, lossy *clusterStep) {
	return stepWithBase(o, func(s *clusterStep) bool { return s.lossy })
}

// nodeQuality is quality over the receive-only subscribers of one node (the apart one left out).
func nodeQuality(r *report.Result, server int) streamQuality {
	return qualityWhere(r, func(s report.Subscription) bool { return !s.Apart && s.Server == server })
}

func (q streamQuality) String() string {
	return fmt.Sprintf("loss %.3f %%, frozen %.3f %% (freezes: %d)", 100*q.loss, 100*q.frozen, q.freezes)
}

func writeClusterLossy(b *strings.Builder, o *outcome) {
	base, l := lossyPair(o)
	if l == nil {
		return
	}
	fmt.Fprintf(b, "- lossy step: the link between nodes 1 and 2 lost %d %% of its UDP each way (nftables, at random)", clusterLossPercent)
	if l.lossErr != nil {
		fmt.Fprintf(b, "; its counters could not be read: %v", l.lossErr)
	} else {
		fmt.Fprintf(b, "; it dropped %d of %d packets (%.2f %%)", l.loss.Dropped, l.loss.Arrived, 100*float64(l.loss.Dropped)/float64(max(l.loss.Arrived, 1)))
	}
	fmt.Fprintf(b, ". Node 1's subscribers, served as by one node: %v; node 2's, across the lossy link: %v", nodeQuality(l.res, 0), nodeQuality(l.res, 1))
	if base != nil {
		fmt.Fprintf(b, "; node 2's in the %d-node step without loss: %v", base.nodes, nodeQuality(base.res, 1))
	}
	if l.relayErr == nil {
		fmt.Fprintf(b, "; node 2 asked again for what it missed (%d NACKs at node 1), node 1 resent %d packets from its cache", l.relay.NACKsReceived, l.relay.Retransmitted)
	}
	b.WriteString(".\n")
}

// lossyGoals: across the lossy link, subscribers stay under the scenario's 1 % bar of loss and
// frozen time.
func lossyGoals(o *outcome) []goal {
	_, l := lossyPair(o)
	if l == nil {
		return nil
	}
	far := nodeQuality(l.res, 1)
	where := fmt.Sprintf("2 nodes + %d %% loss", clusterLossPercent)
	return []goal{
		{name: "cluster: loss % of the subscribers across a link between nodes that loses 5 %", scenario: o.name, where: where,
			value: 100 * far.loss, bound: 100 * clusterMaxLoss, format: "%.3f"},
		{name: "cluster: frozen % of the subscribers across a link between nodes that loses 5 %", scenario: o.name, where: where,
			value: 100 * far.frozen, bound: 100 * clusterMaxFrozen, format: "%.3f"},
	}
}
