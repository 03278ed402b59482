package topo

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/strata-rtc/strata/internal/emu/netem"
	"github.com/strata-rtc/strata/internal/sim"
)

// Addresses: host i's veth is 10.(100+i/250).(i%250).0/24 (.1 on the node,
// .2 in the host); the veth of node pair p is 10.(200+p/250).(p%250).0/24
// (.1 on the lower-numbered node). Every namespace is private to the run, so
// runs side by side reuse the same addresses without clashing.
func hostNet(i int) (gw, addr netip.Addr) {
	a, b := byte(100+i/250), byte(i%250)
	return netip.AddrFrom4([4]byte{10, a, b, 1}), netip.AddrFrom4([4]byte{10, a, b, 2})
}

func pairNet(p int) (lo, hi netip.Addr) {
	a, b := byte(200+p/250), byte(p%250)
	return netip.AddrFrom4([4]byte{10, a, b, 1}), netip.AddrFrom4([4]byte{10, a, b, 2})
}

// Routing tables and rule priorities in a node: a packet the emulator writes
// back (iif tK) leaves towards the link's far node (table 1000+K); a flow's
// packet that link K carries goes into its TUN (table 2000+K).
const (
	tableOut   = 1000
	tableIn    = 2000
	prefOut    = 100
	prefFlow   = 200
	maxLinks   = 999
	maxHosts   = 250 * 50
	maxPairs   = 250 * 50
	tunTxQueue = 10000 // packets the kernel holds for the emulator's reader
)

// mac is the fixed MAC address of one end (1 or 2) of host veth (kind 0)
// or node-pair veth (kind 1) number i. Every neighbour is entered as
// permanent: no ARP exchange delays a run's first packets (a lost ARP
// request costs a second) or adds traffic to the links.
func mac(kind, i, end int) string {
	return fmt.Sprintf("02:%02x:%02x:%02x:00:%02x", kind, i>>8, i&0xff, end)
}

type pair struct {
	idx    int
	lo, hi *node
}

func (n *Network) build(ctx context.Context) error {
	if len(n.spec.Links) > maxLinks || len(n.spec.Hosts) > maxHosts {
		return fmt.Errorf("topo: at most %d links and %d hosts", maxLinks, maxHosts)
	}
	pairs, linkPair := n.pairs()
	steps := []struct {
		name string
		do   func() error
	}{
		{"create namespaces", n.createNamespaces},
		{"set sysctls", n.setSysctls},
		{"create veths", func() error { return n.createVeths(pairs) }},
		{"start the link process", n.startLinkProcess},
		{"configure addresses and routes", func() error { return n.configure(pairs, linkPair) }},
		{"start the switches", func() error { return n.startSwitches(ctx) }},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("topo: %s: %w", s.name, err)
		}
		if err := s.do(); err != nil {
			return fmt.Errorf("topo: %s: %w", s.name, err)
		}
	}
	return nil
}

// pairs lists the node pairs some link joins, and each link's pair.
func (n *Network) pairs() ([]*pair, []*pair) {
	byKey := map[[2]int]*pair{}
	var out []*pair
	linkPair := make([]*pair, len(n.spec.Links))
	for k, l := range n.spec.Links {
		a, b := n.nodes[l.From], n.nodes[l.To]
		if a.idx > b.idx {
			a, b = b, a
		}
		key := [2]int{a.idx, b.idx}
		p := byKey[key]
		if p == nil {
			p = &pair{idx: len(out), lo: a, hi: b}
			byKey[key] = p
			out = append(out, p)
		}
		linkPair[k] = p
	}
	return out, linkPair
}

func (n *Network) allNamespaces() []string {
	var out []string
	for _, name := range n.nodeOrder {
		out = append(out, n.nodes[name].ns)
	}
	for _, h := range n.spec.Hosts {
		out = append(out, n.hosts[h.Name].ns)
	}
	for _, s := range n.switches {
		out = append(out, s.ns)
	}
	return out
}

func (n *Network) createNamespaces() error {
	for _, ns := range n.allNamespaces() {
		if err := ip("netns", "add", ns); err != nil {
			return err
		}
		n.namespace = append(n.namespace, ns)
	}
	return nil
}

func (n *Network) setSysctls() error {
	common := [][2]string{{"ipv6/conf/all/disable_ipv6", "1"}, {"ipv6/conf/default/disable_ipv6", "1"}}
	router := append(common, [][2]string{{"ipv4/ip_forward", "1"},
		{"ipv4/conf/all/rp_filter", "0"}, {"ipv4/conf/default/rp_filter", "0"},
		{"ipv4/conf/all/send_redirects", "0"}, {"ipv4/conf/default/send_redirects", "0"}}...)
	for _, name := range n.nodeOrder {
		if err := sysctls(n.nodes[name].ns, router); err != nil {
			return err
		}
	}
	for _, h := range n.hosts {
		if err := sysctls(h.ns, common); err != nil {
			return err
		}
	}
	for _, s := range n.switches {
		if err := sysctls(s.ns, common); err != nil {
			return err
		}
	}
	return nil
}

// createVeths makes every veth from inside a namespace of the run, its peer
// moved straight into the other: no interface ever appears in the root
// namespace, not even for an instant.
func (n *Network) createVeths(pairs []*pair) error {
	cmds := map[string][]string{}
	for _, h := range n.hosts {
		nd := n.nodes[h.node]
		cmds[nd.ns] = append(cmds[nd.ns], fmt.Sprintf("link add h%d address %s type veth peer name eth0 address %s netns %s",
			h.idx, mac(0, h.idx, 1), mac(0, h.idx, 2), h.ns))
	}
	for _, p := range pairs {
		cmds[p.lo.ns] = append(cmds[p.lo.ns], fmt.Sprintf("link add p%d address %s type veth peer name p%d address %s netns %s",
			p.idx, mac(1, p.idx, 1), p.idx, mac(1, p.idx, 2), p.hi.ns))
	}
	n.switchVeths(cmds)
	for _, name := range n.nodeOrder {
		if err := ipBatch(n.nodes[name].ns, cmds[n.nodes[name].ns]); err != nil {
			return err
		}
	}
	return nil
}

func (n *Network) createTUNs() error {
	n.links = make([]*netem.Link, len(n.spec.Links))
	n.obs = make([]*linkObserver, len(n.spec.Links))
	for k, cfg := range n.spec.Links {
		var f *netem.TUN
		err := inNamespace(n.emuNS(k), func() (err error) {
			f, err = netem.OpenTUN(fmt.Sprintf("t%d", k))
			return err
		})
		if err != nil {
			return fmt.Errorf("link %s: %w", cfg.Name, err)
		}
		n.obs[k] = &linkObserver{net: n, link: k}
		l, err := netem.New(f, netem.Config{Link: cfg, Seed: n.spec.Seed, Duration: n.spec.Duration,
			Interval: n.spec.Interval, Observer: n.obs[k]})
		if err != nil {
			return errors.Join(fmt.Errorf("link %s: %w", cfg.Name, err), f.Close())
		}
		n.links[k] = l
	}
	return nil
}

// configure addresses every interface, routes each host through its node and
// each link's packets through its TUN, then on to the link's far node.
func (n *Network) configure(pairs []*pair, linkPair []*pair) error {
	cmds := map[string][]string{}
	add := func(ns string, f string, a ...any) { cmds[ns] = append(cmds[ns], fmt.Sprintf(f, a...)) }
	for _, name := range n.nodeOrder {
		add(n.nodes[name].ns, "link set lo up")
	}
	for _, h := range n.hosts {
		nd := n.nodes[h.node]
		add(nd.ns, "addr add %s/24 dev h%d", h.gw, h.idx)
		add(nd.ns, "link set h%d up", h.idx)
		add(h.ns, "link set lo up")
		add(h.ns, "addr add %s/24 dev eth0", h.addr)
		add(h.ns, "link set eth0 up")
		add(h.ns, "route add default via %s dev eth0", h.gw)
		add(nd.ns, "neigh add %s lladdr %s dev h%d nud permanent", h.addr, mac(0, h.idx, 2), h.idx)
		add(h.ns, "neigh add %s lladdr %s dev eth0 nud permanent", h.gw, mac(0, h.idx, 1))
	}
	for _, p := range pairs {
		lo, hi := pairNet(p.idx)
		add(p.lo.ns, "addr add %s/24 dev p%d", lo, p.idx)
		add(p.lo.ns, "link set p%d up", p.idx)
		add(p.hi.ns, "addr add %s/24 dev p%d", hi, p.idx)
		add(p.hi.ns, "link set p%d up", p.idx)
		add(p.lo.ns, "neigh add %s lladdr %s dev p%d nud permanent", hi, mac(1, p.idx, 2), p.idx)
		add(p.hi.ns, "neigh add %s lladdr %s dev p%d nud permanent", lo, mac(1, p.idx, 1), p.idx)
	}
	for k, cfg := range n.spec.Links {
		if n.switched[k] != nil {
			n.configureSwitched(k, add)
			continue
		}
		from, p := n.nodes[cfg.From], linkPair[k]
		lo, hi := pairNet(p.idx)
		next := hi
		if p.hi == from {
			next = lo
		}
		add(from.ns, "link set t%d txqueuelen %d", k, tunTxQueue)
		add(from.ns, "link set t%d up", k)
		add(from.ns, "route add default via %s dev p%d onlink table %d", next, p.idx, tableOut+k)
		add(from.ns, "route add default dev t%d table %d", k, tableIn+k)
		add(from.ns, "rule add iif t%d lookup %d pref %d", k, tableOut+k, prefOut)
	}
	for _, f := range n.flowOrder() {
		for dir, r := range f.dirs {
			src, dst := f.src, f.dst
			if dir == 1 {
				src, dst = dst, src
			}
			for _, k := range r.links {
				n.flowRule(k, src.addr, dst.addr, add)
			}
		}
	}
	for _, ns := range n.allNamespaces() {
		if err := ipBatch(ns, cmds[ns]); err != nil {
			return err
		}
	}
	return nil
}

// Start begins emulating: the links' schedules and the statistics' bins
// count from t0.
func (n *Network) Start(t0 time.Time) {
	_, _ = n.proc.call(request{Op: "start", T0Mono: monoNow() - int64(time.Since(t0))})
}

// LinkStats returns each link's statistics so far, in Spec.Links order
// (zeroed if the link process is gone, which Err then says).
func (n *Network) LinkStats() []*sim.LinkStats {
	r, err := n.proc.call(request{Op: "links"})
	out := make([]*sim.LinkStats, len(n.spec.Links))
	for i, cfg := range n.spec.Links {
		s := sim.NewLinkStats(cfg, n.bins())
		if err == nil && i < len(r.Links) {
			s = r.Links[i]
		}
		out[i] = &s
	}
	return out
}

// Counters returns each link emulator's own counters, in Spec.Links order.
func (n *Network) Counters() []netem.Counters {
	r, _ := n.proc.call(request{Op: "counters"})
	return r.Counters
}

// Err reports whether the link process has failed (nil while it serves).
func (n *Network) Err() error {
	if n.proc == nil {
		return errors.New("topo: no link process")
	}
	n.proc.mu.Lock()
	defer n.proc.mu.Unlock()
	return n.proc.dead
}

func (n *Network) bins() int { return int(n.spec.Duration/n.spec.Interval) + 1 }

// In the link process: the links themselves.

func (n *Network) startLinks(t0 time.Time) {
	for _, l := range n.links {
		l.Start(t0)
	}
}

func (n *Network) localLinkStats() []sim.LinkStats {
	out := make([]sim.LinkStats, len(n.links))
	for i, l := range n.links {
		out[i] = l.Stats()
	}
	return out
}

func (n *Network) localCounters() []netem.Counters {
	out := make([]netem.Counters, len(n.links))
	for i, l := range n.links {
		out[i] = l.Counters()
	}
	return out
}

func (n *Network) closeLinks() error {
	var errs []error
	for _, l := range n.links {
		if l != nil {
			errs = append(errs, l.Close())
		}
	}
	return errors.Join(errs...)
}

// Close stops the links and removes every namespace of the network with
// whatever still runs in it. It may be called more than once.
func (n *Network) Close() error {
	n.closeOnce.Do(func() {
		var errs []error
		if n.proc != nil {
			errs = append(errs, n.proc.stop())
		}
		errs = append(errs, n.closeSwitches())
		for i := len(n.namespace) - 1; i >= 0; i-- {
			errs = append(errs, deleteNamespace(n.namespace[i]))
		}
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}
