package topo

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/ovs"
	"github.com/strata-rtc/strata/internal/sim"
)

// Switched links. A link named in Spec.Switched gets an Open vSwitch at its source end, so that
// every packet entering the link (an SFU's media and background TCP alike) passes the switch
// before the link's emulated queue, as seed 000's SDN switch next to the SFU:
//
//	from-node w<k> ⇄ w<k> [OVS bridge in the switch namespace] b<k> ⇄ w<k> to-node → TUN t<k>
//
// The link's packets leave the source node over w<k> instead of the node pair's veth, cross the
// bridge, and are emulated at the link's far end (ingress emulation): a policy rule on the far node
// sends what arrives on w<k> into the TUN, and what the emulator writes back is routed on from
// there. For a one-way drop-tail link, queue, serialisation and delay are the same wherever the
// queue sits. All switched links leaving one node share that node's switch (one bridge, two ports
// per link): netctl programs one switch per enforcement node. The port by which a link's packets
// enter the switch has the name of the source node's end, w<k>, which the controller's topology
// gives as the link's interface: a meter policing what enters link k matches in_port=w<k>.

// switchNode is the switch at one node's egress.
type switchNode struct {
	node  *node
	ns    string
	dir   string
	links []int
	sw    *ovs.Switch // in the parent only, once started
}

// SwitchInfo describes the switch at a node: its namespace, its OpenFlow management target
// (for `strata netctl serve -switch NODE=TARGET` and ovs-ofctl) and the links it feeds, each with
// the interface its packets leave the node by (Ports[i] for Links[i]), also the name of the
// switch's port they enter by.
type SwitchInfo struct {
	Node, Namespace, Target, Bridge string
	Links, Ports                    []string
}

// prefSwitched is the priority of the far node's rules that send a switched link's arrivals into
// its TUN: below the emulators' own (prefOut), above the flows' (prefFlow), which would send the
// packet on to the next link before it has crossed this one.
const prefSwitched = 150

// switchNet is switched link k's subnet: .1 on the source node's w<k>, .2 on the far node's.
func switchNet(k int) (src, dst netip.Addr) {
	a, b := byte(251+k/250), byte(k%250)
	return netip.AddrFrom4([4]byte{10, a, b, 1}), netip.AddrFrom4([4]byte{10, a, b, 2})
}

// planSwitches checks Spec.Switched and groups the links by source node.
func (n *Network) planSwitches() error {
	n.switched = map[int]*switchNode{}
	byNode := map[string]*switchNode{}
	for _, name := range n.spec.Switched {
		k := slices.IndexFunc(n.spec.Links, func(l sim.LinkConfig) bool { return l.Name == name })
		if k < 0 {
			return fmt.Errorf("topo: switched link %q is not a link of the network", name)
		}
		if n.switched[k] != nil {
			return fmt.Errorf("topo: link %s is switched twice", name)
		}
		from := n.nodes[n.spec.Links[k].From]
		s := byNode[from.name]
		if s == nil {
			s = &switchNode{node: from, ns: n.nsFor("s", len(n.switches), from.name),
				dir: filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-%d-ovs%d", prefix, n.pid, n.seq, len(n.switches)))}
			byNode[from.name] = s
			n.switches = append(n.switches, s)
		}
		s.links = append(s.links, k)
		n.switched[k] = s
	}
	return nil
}

// emuNS is the namespace of link k's TUN: its far node's when the link is switched.
func (n *Network) emuNS(k int) string {
	l := n.spec.Links[k]
	if n.switched[k] != nil {
		return n.nodes[l.To].ns
	}
	return n.nodes[l.From].ns
}

// switchVeths adds the veths of the switched links to cmds (per namespace).
func (n *Network) switchVeths(cmds map[string][]string) {
	for _, s := range n.switches {
		for _, k := range s.links {
			to := n.nodes[n.spec.Links[k].To]
			cmds[s.node.ns] = append(cmds[s.node.ns], fmt.Sprintf("link add w%d address %s type veth peer name w%d address %s netns %s",
				k, mac(2, k, 1), k, mac(2, k, 2), s.ns))
			cmds[to.ns] = append(cmds[to.ns], fmt.Sprintf("link add w%d address %s type veth peer name b%d address %s netns %s",
				k, mac(2, k, 4), k, mac(2, k, 3), s.ns))
		}
	}
}

// configureSwitched addresses a switched link's veths and routes its packets: out of the source
// node over w<k> to the far node's w<k>, there into the TUN.
func (n *Network) configureSwitched(k int, add func(ns, f string, a ...any)) {
	from, to := n.nodes[n.spec.Links[k].From], n.nodes[n.spec.Links[k].To]
	src, dst := switchNet(k)
	add(from.ns, "addr add %s/24 dev w%d", src, k)
	add(from.ns, "link set w%d up", k)
	add(from.ns, "neigh add %s lladdr %s dev w%d nud permanent", dst, mac(2, k, 4), k)
	add(from.ns, "route add default via %s dev w%d onlink table %d", dst, k, tableIn+k)
	add(to.ns, "addr add %s/24 dev w%d", dst, k)
	add(to.ns, "link set w%d up", k)
	add(to.ns, "neigh add %s lladdr %s dev w%d nud permanent", src, mac(2, k, 1), k)
	add(to.ns, "link set t%d txqueuelen %d", k, tunTxQueue)
	add(to.ns, "link set t%d up", k)
	add(to.ns, "route add default dev t%d table %d", k, tableIn+k)
}

// flowRule is the rule that puts a flow's packets (src → dst) onto link k.
func (n *Network) flowRule(k int, src, dst netip.Addr, add func(ns, f string, a ...any)) {
	if n.switched[k] != nil {
		add(n.nodes[n.spec.Links[k].To].ns, "rule add iif w%d from %s to %s lookup %d pref %d", k, src, dst, tableIn+k, prefSwitched)
	}
	add(n.nodes[n.spec.Links[k].From].ns, "rule add from %s to %s lookup %d pref %d", src, dst, tableIn+k, prefFlow)
}

// startSwitches runs every switch: Open vSwitch in its namespace, the links' veth ends as its
// ports, checksum offload off on every end of them (the userspace datapath never completes a
// partial checksum), and the far ends' MAC addresses entered statically (the far node never
// sends through the bridge, so it would never learn them and would flood every frame).
func (n *Network) startSwitches(ctx context.Context) error {
	for _, s := range n.switches {
		sw, err := ovs.Start(ctx, ovs.Config{Namespace: s.ns, Dir: s.dir})
		if err != nil {
			return fmt.Errorf("switch at %s: %w", s.node.name, err)
		}
		s.sw = sw
		for _, k := range s.links {
			to := n.nodes[n.spec.Links[k].To]
			for _, end := range [][2]string{{s.node.ns, "w" + strconv.Itoa(k)}, {to.ns, "w" + strconv.Itoa(k)},
				{s.ns, "w" + strconv.Itoa(k)}, {s.ns, "b" + strconv.Itoa(k)}} {
				if err := ovs.DisableTxOffload(ctx, end[0], end[1]); err != nil {
					return err
				}
			}
			for _, p := range []string{"w", "b"} {
				if err := sw.AddPort(ctx, p+strconv.Itoa(k)); err != nil {
					return err
				}
			}
			if err := s.fdbAdd(ctx, "b"+strconv.Itoa(k), mac(2, k, 4)); err != nil {
				return err
			}
			if err := s.fdbAdd(ctx, "w"+strconv.Itoa(k), mac(2, k, 1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fdbAdd enters a static MAC address on a port of the bridge (ovs-appctl fdb/add; its control
// socket is a file in the switch's directory).
func (s *switchNode) fdbAdd(ctx context.Context, port, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ovs-appctl", "-t", filepath.Join(s.dir, "ovs-vswitchd.ctl"),
		"fdb/add", s.sw.Bridge(), port, "0", addr).CombinedOutput()
	if err != nil {
		return fmt.Errorf("switch at %s: ovs-appctl fdb/add %s %s: %v: %s", s.node.name, port, addr, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// closeSwitches stops the switches and removes their directories.
func (n *Network) closeSwitches() error {
	var errs []error
	for _, s := range n.switches {
		if s.sw != nil {
			errs = append(errs, s.sw.Close())
		}
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// RestartSwitch kills the switch at node's ovs-vswitchd (SIGKILL, as a crash) and starts it again
// (ovs.Switch.Restart) with the bridge's static MAC entries back: the bridge and its ports return
// from the database, the flow table with the base NORMAL flow only, so a controller must reinstall
// its rules. The switched links forward nothing while ovs-vswitchd is down (the userspace datapath
// runs in it).
func (n *Network) RestartSwitch(ctx context.Context, node string) error {
	i := slices.IndexFunc(n.switches, func(s *switchNode) bool { return s.node.name == node })
	if i < 0 || n.switches[i].sw == nil {
		return fmt.Errorf("topo: no running switch at node %q", node)
	}
	s := n.switches[i]
	if err := s.sw.Restart(ctx); err != nil {
		return err
	}
	for _, k := range s.links {
		if err := s.fdbAdd(ctx, "b"+strconv.Itoa(k), mac(2, k, 4)); err != nil {
			return err
		}
		if err := s.fdbAdd(ctx, "w"+strconv.Itoa(k), mac(2, k, 1)); err != nil {
			return err
		}
	}
	return nil
}

// Switches describes the network's switches, in the order their nodes' first links appear in
// Spec.Switched.
func (n *Network) Switches() []SwitchInfo {
	out := make([]SwitchInfo, 0, len(n.switches))
	for _, s := range n.switches {
		info := SwitchInfo{Node: s.node.name, Namespace: s.ns}
		if s.sw != nil {
			info.Target, info.Bridge = s.sw.MgmtTarget(), s.sw.Bridge()
		}
		for _, k := range s.links {
			info.Links = append(info.Links, n.spec.Links[k].Name)
			info.Ports = append(info.Ports, "w"+strconv.Itoa(k))
		}
		out = append(out, info)
	}
	return out
}

// reapSwitchDirs removes the switch directories of emulations whose process is gone.
func reapSwitchDirs() error {
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*-*-ovs*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		if dead(filepath.Base(d)) {
			errs = append(errs, os.RemoveAll(d))
		}
	}
	return errors.Join(errs...)
}
