package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/clusterrig"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// tcClasses is `tc -s class show` of a node's link as the scenario sets it up (captured from
// iproute2 6.x): the default class, a class towards another node, and the limited class with its
// tbf leaf.
const tcClasses = `class htb 1:1 root prio 0 rate 10Gbit ceil 10Gbit burst 0b cburst 0b 
 Sent 174 bytes 3 pkt (dropped 0, overlimits 0 requeues 0) 
 backlog 0b 0p requeues 0
 lended: 3 borrowed: 0 giants: 0
 tokens: 13 ctokens: 13

class htb 1:11 root prio 0 rate 10Gbit ceil 10Gbit burst 0b cburst 0b 
 Sent 1420 bytes 10 pkt (dropped 0, overlimits 0 requeues 0) 
 backlog 0b 0p requeues 0
 lended: 0 borrowed: 0 giants: 0
 tokens: 15 ctokens: 15

class htb 1:99 root leaf 99: prio 0 rate 10Gbit ceil 10Gbit burst 0b cburst 0b 
 Sent 1042 bytes 1 pkt (dropped 47, overlimits 0 requeues 0) 
 backlog 2084b 2p requeues 0
 lended: 0 borrowed: 0 giants: 0
 tokens: 15 ctokens: 15

class tbf 99:1 parent 99: 
`

func TestParseClassBytes(t *testing.T) {
	got, err := parseClassBytes(tcClasses)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{classID(classOther): 174, classID(classToNode(1)): 1420, classID(classApart): 1042}
	if len(got) != len(want) {
		t.Errorf("classes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("class %s: %d bytes, want %d", k, got[k], v)
		}
	}
	if _, err := parseClassBytes("class htb 1:1 root\n Sent lots bytes 3 pkt\n"); err == nil {
		t.Error("a malformed byte count was accepted")
	}
}

func TestLinkRatesOverTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	reading := func(s int, b01, b02, b12, apart uint64) linkReading {
		return linkReading{at: t0.Add(time.Duration(s) * time.Second),
			bytes: [][]uint64{{0, b01, b02}, {0, 0, b12}, {0, 0, 0}}, apart: []uint64{0, apart, 0}}
	}
	readings := []linkReading{reading(0, 0, 0, 0, 0), reading(1, 1e6, 1e6, 0, 0), reading(3, 1e6+500e3, 1e6+500e3, 0, 250e3), reading(5, 2e6, 2e6, 0, 500e3)}
	r, ok := window(readings, t0.Add(500*time.Millisecond), t0.Add(5*time.Second))
	if !ok || r.seconds != 4 {
		t.Fatalf("window: ok %v, %v s", ok, r.seconds)
	}
	// 1 MB over 4 s on each of two links: 2 Mbit/s each, 4 in all; 500 kB to the apart subscriber.
	if r.mbps[0][1] != 2 || r.mbps[0][2] != 2 || r.mbps[1][2] != 0 || r.total() != 4 || r.apart[1] != 1 {
		t.Errorf("rates %+v, total %v", r, r.total())
	}
	if _, ok := window(readings, t0.Add(4*time.Second), t0.Add(5*time.Second)); ok {
		t.Error("a window with one reading gave rates")
	}
}

func TestClusterPlans(t *testing.T) {
	sc, cs := scales["small"], clusterScales["small"]
	apis := []string{"http://10.233.5.11:8088/janus", "http://10.233.5.12:8088/janus", "http://10.233.5.13:8088/janus"}
	one := clusterPlan(sc, cs, apis[:1], "scb1", "")
	if err := one.Validate(); err != nil || one.Home() != apis[0] || one.Subscribers != cs.PerNode || len(one.Servers) != 0 {
		t.Errorf("one node: %v, %+v", err, one)
	}
	lim := clusterPlan(sc, cs, apis, "scb1", "10.233.5.2")
	if err := lim.Validate(); err != nil {
		t.Fatal(err)
	}
	perNode := map[int]int{}
	for i := range lim.Subscribers {
		perNode[lim.SubscriberServer(i)]++
	}
	// N on every node, and the limited one more on node 2.
	if perNode[0] != cs.PerNode || perNode[1] != cs.PerNode+1 || perNode[2] != cs.PerNode || lim.Home() != apis[0] ||
		lim.Apart.Address != "10.233.5.2" || lim.ICEInterfaces[0] != "scb1" || lim.Substream != 2 || lim.Duration != sc.Hold {
		t.Errorf("limited plan: subscribers per node %v, %+v", perNode, lim)
	}
	steps := clusterSteps(cs)
	if len(steps) != 5 || steps[0].nodes != 1 || steps[2].nodes != 3 || steps[2].limited || !steps[3].limited || steps[3].nodes != 3 ||
		!steps[4].lossy || steps[4].nodes != 2 || steps[4].name() != "2-nodes-lossy" {
		t.Errorf("steps %+v", steps)
	}
	if len(clusterSteps(clusterScale{MaxNodes: 1})) != 1 {
		t.Error("one node has no limited or lossy step (node 2 is where the limited subscriber goes, and the lossy link's end)")
	}
	if a, err := apartAddress("10.233.7.1"); err != nil || a != "10.233.7.2" {
		t.Errorf("apart address %q, %v", a, err)
	}
}

func TestLayerOf(t *testing.T) {
	for kbps, want := range map[float64]string{1250: "f", 900: "f", 500: "h", 380: "h", 200: "q", 90: "q", 0: "–"} {
		if got := layerOf(kbps); got != want {
			t.Errorf("%v kbit/s: layer %q, want %q", kbps, got, want)
		}
	}
}

// clusterRun is a synthetic step: perNode subscribers on each of nodes, their video at kbps
// (per node), and the apart subscriber on node 2 at apartKbps when above 0.
func clusterRun(nodes, perNode int, kbps []float64, apartKbps float64) *report.Result {
	r := &report.Result{Plan: plan.FanOut("x", nodes*perNode)}
	r.Plan.Duration = 20 * time.Second
	add := func(server int, kbps float64, apart bool) {
		i := len(r.Subscriptions)
		r.Subscriptions = append(r.Subscriptions, report.Subscription{Index: i, Owner: -1, Expected: 2, Server: server, Apart: apart})
		r.Streams = append(r.Streams,
			report.Stream{Subscription: i, Owner: -1, Server: server, Summary: rtpstats.Summary{Kind: "video", KbitPerSec: kbps, Live: true}},
			report.Stream{Subscription: i, Owner: -1, Server: server, Summary: rtpstats.Summary{Kind: "audio", KbitPerSec: 40, Live: true}})
	}
	for i := range nodes * perNode {
		add(i%nodes, kbps[i%nodes], false)
	}
	if apartKbps > 0 {
		add(clusterApartNode, apartKbps, true)
	}
	r.Plan.Subscribers = len(r.Subscriptions)
	r.Totals = report.Totals{Publishers: 1, Subscribers: len(r.Subscriptions), CompleteShare: 1}
	for i := range nodes {
		r.Nodes = append(r.Nodes, report.Node{Server: fmt.Sprint(i), Sampled: true, SteadyCPUPct: 40, SteadyRSSBytes: 30 << 20})
	}
	return r
}

func twoNodeLinks(pub float64, nodes int) linkRates {
	l := linkRates{seconds: 10, mbps: make([][]float64, nodes), apart: make([]float64, nodes)}
	for i := range l.mbps {
		l.mbps[i] = make([]float64, nodes)
	}
	for j := 1; j < nodes; j++ {
		l.mbps[0][j] = pub
	}
	return l
}

// TestClusterVerdict checks the table and goals: growth from the clean steps, the traffic against
// the publisher's rate × node pairs, and the layers on the other nodes in the limited step.
func TestClusterVerdict(t *testing.T) {
	top := []float64{1200, 1200, 1200}
	frozen := clusterRun(3, 4, top, 0)
	frozen.Streams[0].FreezeMs = 2000 // 2 s of 12 × 20 s of video: 0.8 %, still clean
	lim := clusterRun(3, 4, []float64{1200, 1200, 400}, 380)
	// Across the lossy link node 2's subscribers lose 0.5 % and one freezes for 400 ms (0.5 % of
	// four 20 s videos).
	lossy := clusterRun(2, 4, top, 0)
	for i := range lossy.Streams {
		if lossy.Streams[i].Server == 1 {
			lossy.Streams[i].LossRatio = 0.005
		}
	}
	lossy.Streams[2].Freezes, lossy.Streams[2].FreezeMs = 1, 400
	steps := []*clusterStep{
		{nodes: 1, res: clusterRun(1, 4, top, 0), linksOK: true, links: twoNodeLinks(0, 1), pubMbps: 1.9},
		{nodes: 2, res: clusterRun(2, 4, top, 0), linksOK: true, links: twoNodeLinks(2.0, 2), pubMbps: 1.9,
			relay: relayCounters{PacketsSent: 4200, NACKsReceived: 5, Retransmitted: 4, KeyframeRequestsReceived: 2}},
		{nodes: 3, res: frozen, linksOK: true, links: twoNodeLinks(2.1, 3), pubMbps: 1.9},
		{nodes: 3, limited: true, res: lim, linksOK: true, links: twoNodeLinks(2.0, 3), pubMbps: 1.9, relayErr: errors.New("node2: refused")},
		{nodes: 2, lossy: true, res: lossy, linksOK: true, links: twoNodeLinks(2.1, 2), pubMbps: 1.9,
			loss: clusterrig.LossCounts{Arrived: 2000, Dropped: 100}, relay: relayCounters{NACKsReceived: 90, Retransmitted: 95}},
	}
	steps[1].res.Generator.SteadyCPUSeconds, steps[1].res.Totals.SteadySeconds = 5, 10
	o := &outcome{name: clusterScenario, cluster: steps, runs: map[string][]*report.Result{}}
	c := config{targets: []string{"strata"}, cluster: clusterScale{PerNode: 4, MaxNodes: 3, LimitKbps: 600}, scale: scales["small"]}
	got := map[string]goal{}
	for _, g := range verdict(c, []*outcome{o}) {
		got[strings.SplitN(g.name, ",", 2)[0]] = g
	}
	growth := got["cluster: subscribers held clean"]
	if growth.value != 3 || growth.where != "3 nodes" || !growth.met() {
		t.Errorf("growth %+v", growth)
	}
	traffic := got["cluster: traffic between nodes off the publisher's rate × node pairs"]
	if math.Abs(traffic.value-(4.2/3.8-1)) > 1e-9 || traffic.where != "3 nodes" || !traffic.met() {
		t.Errorf("traffic %+v", traffic)
	}
	// Node 3's four subscribers fell from f to h with the limited one on node 2.
	changed := got["cluster: subscribers on other nodes whose layer changed with one limited on node 2"]
	if changed.value != 4 || changed.met() {
		t.Errorf("changed layers %+v", changed)
	}
	if kept := got["cluster: the limited subscriber kept the top layer (1 = the limit did not bite)"]; kept.value != 0 || !kept.met() {
		t.Errorf("limited subscriber %+v", kept)
	}
	lossLoss := got["cluster: loss % of the subscribers across a link between nodes that loses 5 %"]
	lossFrozen := got["cluster: frozen % of the subscribers across a link between nodes that loses 5 %"]
	if math.Abs(lossLoss.value-0.5) > 1e-9 || !lossLoss.met() || math.Abs(lossFrozen.value-0.5) > 1e-9 || !lossFrozen.met() ||
		lossFrozen.where != "2 nodes + 5 % loss" {
		t.Errorf("lossy goals %+v, %+v", lossLoss, lossFrozen)
	}
	// The lossy step counts neither for growth nor as the limited step's base.
	if base, _ := limitedPair(o); base != steps[2] {
		t.Errorf("limited step's base %+v", base)
	}

	// A step that froze 2 % of its video is not clean, and growth stops at the steps before it.
	steps[2].res.Streams[0].FreezeMs = 5000
	if clusterClean(steps[2].res) {
		t.Error("2 % frozen judged clean")
	}
	// The limited subscriber's own loss does not make its step unclean; the others' does.
	lim.Streams[len(lim.Streams)-1].LossRatio = 0.2
	if !clusterClean(lim) {
		t.Error("the limited subscriber's loss made the step unclean")
	}
	lim.Streams[0].LossRatio = 0.3
	if clusterClean(lim) {
		t.Error("a subscriber on node 1 lost 30 % of a stream (2.3 % on average) and the step is clean")
	}
	lim.Streams[0].LossRatio = 0
	g := clusterGoals(c, o)[0]
	if g.value != 2 || g.met() {
		t.Errorf("growth with 3 nodes not clean: %+v", g)
	}

	var b strings.Builder
	writeCluster(&b, c, o)
	for _, want := range []string{"| 3 + limited | 13 | true |", "| 2 | 8 | true | 0.000 | 0.000 | 0 | 0 | 40 / 40 | 80 | 50 | 30 / 30 | 2.00 | 1.90 | 1.05 |", "1: f×4; 2: f×4; 3: h×4", "1→2 2.10, 1→3 2.10, 2→1 0.00",
		"received layer h (380 kbit/s of video, mean over its life; loss 10.00 %)",
		"4200 packets sent, 5 asked again (NACK), 4 retransmitted, 2 keyframe requests from edges", "could not be read: node2: refused", "Subscribers on the other nodes on another layer than without it: 4.",
		"| 2 + 5 % loss | 8 | true |", "it dropped 100 of 2000 packets (5.00 %)",
		"Node 1's subscribers, served as by one node: loss 0.000 %, frozen 0.000 % (freezes: 0); node 2's, across the lossy link: loss 0.500 %, frozen 0.500 % (freezes: 1); node 2's in the 2-node step without loss: loss 0.000 %",
		"node 1 resent 95 packets from its cache"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("cluster table lacks %q:\n%s", want, b.String())
		}
	}
}
