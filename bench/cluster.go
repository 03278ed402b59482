package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/clusterrig"
	"github.com/strata-rtc/strata/internal/load"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/rig"
)

// The cluster scenario: strata nodes on one machine (internal/cluster/clusterrig: a network
// namespace each, a bridge, a real redis-server), one simulcast publisher on node 1 and the same
// number of subscribers on every node, with 1, 2, then up to 3 nodes, each step on a fresh
// cluster; then the largest cluster again with one more subscriber on node 2 behind a rate-limited
// link, to check the subscribers on the other nodes keep their layers; then two nodes whose link
// loses 5 % of its packets each way (cluster_loss.go). Janus has no cluster, so
// the scenario runs strata only. Every layer of the feed crosses each link from node 1 to another
// node once, whatever the number of subscribers there, so the traffic between nodes should be the
// publisher's rate times the node pairs it spans (cluster_net.go measures it in the kernel).
const (
	clusterScenario = "cluster"
	clusterTitle    = "Cluster: one simulcast publisher on node 1, N subscribers per node, 1 → 2 → 3 nodes (strata only)"
)

// clusterScale sizes the scenario.
type clusterScale struct {
	// PerNode is how many subscribers each node serves (the largest a 1-node step holds clean on
	// the machine the scale is for).
	PerNode  int
	MaxNodes int
	// LimitKbps is the apart subscriber's link; below the top layer's rate, so its node must
	// send it a lower layer.
	LimitKbps int
	// Pin pins node i to core i modulo the cores (taskset), so the nodes do not migrate.
	Pin bool
}

var clusterScales = map[string]clusterScale{
	"small": {PerNode: 64, MaxNodes: 3, LimitKbps: 600},
	"full":  {PerNode: 128, MaxNodes: 3, LimitKbps: 600},
}

func addClusterFlags(fs *flag.FlagSet, c *clusterScale) {
	fs.IntVar(&c.PerNode, "cluster-subscribers", 0, "cluster: subscribers per node (default: the scale's)")
	fs.IntVar(&c.MaxNodes, "cluster-nodes", 0, "cluster: the largest cluster, in nodes (default 3)")
	fs.IntVar(&c.LimitKbps, "cluster-limit", 0, "cluster: the limited subscriber's link, kbit/s (default: the scale's)")
	fs.BoolVar(&c.Pin, "cluster-pin", false, "cluster: pin node i to core i modulo the cores")
}

// merge overrides the scale with the flags that were set.
func (c clusterScale) merge(f clusterScale) clusterScale {
	if f.PerNode > 0 {
		c.PerNode = f.PerNode
	}
	if f.MaxNodes > 0 {
		c.MaxNodes = f.MaxNodes
	}
	if f.LimitKbps > 0 {
		c.LimitKbps = f.LimitKbps
	}
	c.Pin = c.Pin || f.Pin
	return c
}

// The apart subscriber's link: tbf's bucket and queue, as the uplink scenario's.
const (
	clusterLimitBurst = 1600
	clusterLimitQueue = 200 * time.Millisecond
	// clusterApartNode is the node the limited subscriber joins (node 2).
	clusterApartNode = 1
)

// clusterStep is one run of the scenario.
type clusterStep struct {
	nodes   int
	limited bool
	// lossy: the link between nodes 1 and 2 loses clusterLossPercent of its UDP each way; loss is
	// what it dropped (lossErr why that is unknown).
	lossy   bool
	loss    clusterrig.LossCounts
	lossErr error
	res     *report.Result
	// links is the traffic between nodes in the run's steady window (linksOK says whether it was
	// measured); pubMbps what the publisher sent then.
	links   linkRates
	linksOK bool
	pubMbps float64
	// relay is the relays' own counters over the whole run (relayErr why they are missing).
	relay    relayCounters
	relayErr error
}

// clusterPlan is step's load: the fan-out's publisher and subscribers (top layer asked for),
// spread over the nodes, with the apart subscriber added on node 2 when limited.
func clusterPlan(sc scale, cs clusterScale, apis []string, bridge, apartAddr string) plan.Plan {
	subs := cs.PerNode * len(apis)
	if apartAddr != "" {
		subs++
	}
	p := plan.FanOut("", subs)
	p.Name = fmt.Sprintf("cluster-%dx%d", len(apis), cs.PerNode)
	if len(apis) > 1 {
		p.Servers = apis
	} else {
		p.Server = apis[0]
	}
	p.ICEInterfaces = []string{bridge}
	p.Duration, p.Warmup = sc.Hold, sc.Warmup
	if apartAddr != "" {
		p.Name += "-limited"
		p.Apart = plan.Apart{Address: apartAddr, Server: clusterApartNode}
	}
	return p
}

// clusterSteps are the steps to run: 1 … MaxNodes nodes, then MaxNodes again with the limited
// subscriber and two nodes over a lossy link (when there are at least two nodes).
func clusterSteps(cs clusterScale) []clusterStep {
	var out []clusterStep
	for n := 1; n <= cs.MaxNodes; n++ {
		out = append(out, clusterStep{nodes: n})
	}
	if cs.MaxNodes > clusterApartNode {
		out = append(out, clusterStep{nodes: cs.MaxNodes, limited: true}, clusterStep{nodes: 2, lossy: true})
	}
	return out
}

// runCluster runs every step; a step that fails is reported and the next one still runs. As in
// the sweeps, a step that is not clean is run once more and the repeat is what counts: on a shared
// machine a stall of other work freezes every stream at once.
func runCluster(ctx context.Context, c config, log io.Writer) (steps []*clusterStep, notes []string, err error) {
	var errs []error
	for _, s := range clusterSteps(c.cluster) {
		if ctx.Err() != nil {
			break
		}
		step := s
		err := runClusterStep(ctx, c, &step, log)
		if err == nil && !clusterClean(step.res) && ctx.Err() == nil {
			r := step.res
			loss, frozen := quality(r)
			notes = append(notes, fmt.Sprintf("%s was not clean (loss %.3f %%, frozen %.3f %%, %d freezes, %d late skips, load average %.1f) and was repeated",
				r.Plan.Name, 100*loss, 100*frozen, r.Totals.Freezes, r.Generator.LateSkips, r.Machine.LoadAvg))
			step = s
			err = runClusterStep(ctx, c, &step, log)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", step.name(), err))
		}
		if step.res != nil {
			steps = append(steps, &step)
		}
	}
	return steps, notes, errors.Join(errs...)
}

func runClusterStep(ctx context.Context, c config, step *clusterStep, log io.Writer) error {
	dir, _ := filepath.Abs(filepath.Join(c.out, clusterScenario, step.name()))
	extra := benchStrataYAML
	if c.extra != "" {
		var err error
		if extra, err = rig.MergeYAML(extra, c.extra); err != nil {
			return err
		}
	}
	cl, err := clusterrig.Start(ctx, clusterrig.Options{Nodes: step.nodes, Bin: c.Strata, Dir: dir, Extra: extra})
	if err != nil {
		return err // Start has removed what it had set up
	}
	defer cl.Close()
	wait, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = cl.WaitMembers(wait)
	cancel()
	if err != nil {
		return err
	}
	var apis []string
	var pids []int
	for i, n := range cl.Nodes {
		apis, pids = append(apis, n.API()), append(pids, n.PID())
		if c.cluster.Pin {
			if out, err := exec.Command("taskset", "-a", "-p", "-c", fmt.Sprint(i%runtime.NumCPU()), fmt.Sprint(n.PID())).CombinedOutput(); err != nil {
				return fmt.Errorf("pinning %s: %v: %s", n.ID, err, out)
			}
		}
	}
	var limit *linkLimit
	apartAddr := ""
	if step.limited {
		if apartAddr, err = apartAddress(cl.HostIP); err != nil {
			return err
		}
		if out, err := exec.Command("ip", "addr", "add", apartAddr+"/24", "dev", cl.Bridge).CombinedOutput(); err != nil {
			return fmt.Errorf("apart address: %v: %s", err, out)
		}
		limit = &linkLimit{addr: apartAddr, kbps: c.cluster.LimitKbps, burst: clusterLimitBurst, queue: clusterLimitQueue}
	}
	if err := classifyLinks(cl, clusterApartNode, limit); err != nil {
		return err
	}
	var loss *clusterrig.Loss
	if step.lossy {
		if loss, err = cl.LoseBetween(0, 1, clusterLossPercent); err != nil {
			return err
		}
	}
	p := clusterPlan(c.scale, c.cluster, apis, cl.Bridge, apartAddr)
	if step.lossy {
		p.Name += "-lossy"
	}
	if c.receiver != "" {
		p.Receiver = c.receiver
	}
	fmt.Fprintf(log, "== strata cluster: %s\n", p.Name)
	stop := sampleLinks(cl, log)
	res, err := load.Run(ctx, p, load.Options{MediaDir: c.MediaDir, ServerPID: pids[0], ServerPIDs: pids, Progress: log})
	all := stop()
	if err != nil {
		return err
	}
	if loss != nil {
		step.loss, step.lossErr = loss.Counts()
	}
	step.res = res
	end := res.Started.Add(time.Duration(res.Seconds * float64(time.Second)))
	from := end.Add(-time.Duration(res.Totals.SteadySeconds * float64(time.Second)))
	// Readings are a second apart; half a second of slack takes the ones at the window's edges.
	step.links, step.linksOK = window(all, from.Add(-500*time.Millisecond), end.Add(500*time.Millisecond))
	step.pubMbps = sentMbps(res, res.Seconds-res.Totals.SteadySeconds)
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	step.relay, step.relayErr = readRelays(rctx, cl)
	cancel()
	if err := report.Write(dir, res); err != nil {
		return err
	}
	for _, n := range cl.Nodes {
		if !n.Alive() {
			return fmt.Errorf("%s died during %s: %s", n.ID, p.Name, rig.Tail(n.Log()))
		}
	}
	return nil
}

// name names the step's directory: 3-nodes, 3-nodes-limited, 2-nodes-lossy.
func (s *clusterStep) name() string {
	name := fmt.Sprintf("%d-nodes", s.nodes)
	if s.limited {
		name += "-limited"
	}
	if s.lossy {
		name += "-lossy"
	}
	return name
}

// apartAddress is the apart subscriber's address on the bridge: the host's address there with
// the last byte 2 (the rig's nodes have 11 and above).
func apartAddress(hostIP string) (string, error) {
	ip := net.ParseIP(hostIP).To4()
	if ip == nil {
		return "", fmt.Errorf("bridge address %q is not IPv4", hostIP)
	}
	ip[3] = 2
	return ip.String(), nil
}

// sampleLinks reads the links' counters every second until the returned stop, which returns the
// readings in time order.
func sampleLinks(cl *clusterrig.Cluster, log io.Writer) func() []linkReading {
	var mu sync.Mutex
	var got []linkReading
	done := make(chan struct{})
	finished := make(chan struct{})
	take := func() {
		r, err := readLinks(cl)
		if err != nil {
			fmt.Fprintf(log, "bench: cluster: %v\n", err)
			return
		}
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		take()
		for {
			select {
			case <-done:
				take()
				return
			case <-t.C:
				take()
			}
		}
	}()
	return func() []linkReading {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// sentMbps is what the publishers sent from time from (seconds since the start) to the end.
func sentMbps(r *report.Result, from float64) float64 {
	var sum float64
	n := 0
	for _, s := range r.Samples {
		if s.T >= from {
			sum += s.SentMbps
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// runClusterOutcome runs the scenario into o (strata only: with no strata among the targets it
// says so and runs nothing).
func runClusterOutcome(ctx context.Context, c config, o *outcome, log io.Writer) error {
	if !slices.Contains(c.targets, "strata") {
		o.notes = append(o.notes, "strata is not among --targets; Janus has no cluster to compare")
		return nil
	}
	steps, notes, err := runCluster(ctx, c, log)
	o.cluster = steps
	o.notes = append(o.notes, notes...)
	for _, s := range steps {
		o.runs["strata"] = append(o.runs["strata"], s.res)
	}
	if err != nil {
		o.notes = append(o.notes, err.Error())
	}
	return err
}

// clusterPreflight checks what the cluster scenario needs besides root.
func clusterPreflight(c *config) []error {
	var errs []error
	if _, err := os.Stat(c.Strata); err != nil {
		errs = append(errs, fmt.Errorf("cluster needs the strata binary: %w (run make build)", err))
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		errs = append(errs, errors.New("cluster needs redis-server (apt-get install -y redis-server), or run without it (--only)"))
	}
	if _, err := exec.LookPath("tc"); err != nil {
		errs = append(errs, errors.New("cluster needs tc (iproute2)"))
	}
	if _, err := exec.LookPath("nft"); err != nil {
		errs = append(errs, errors.New("cluster needs nft for its lossy link (apt-get install -y nftables)"))
	}
	if c.cluster.Pin {
		if _, err := exec.LookPath("taskset"); err != nil {
			errs = append(errs, errors.New("--cluster-pin needs taskset (util-linux)"))
		}
	}
	if c.cluster.PerNode < 1 || c.cluster.MaxNodes < 1 || c.cluster.LimitKbps < 1 {
		errs = append(errs, fmt.Errorf("cluster: subscribers per node (%d), nodes (%d) and the limit (%d kbit/s) must be positive",
			c.cluster.PerNode, c.cluster.MaxNodes, c.cluster.LimitKbps))
	}
	return errs
}
