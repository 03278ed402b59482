package topo

import (
	"context"
	"net/netip"
	"os/exec"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// Host is an endpoint's leaf namespace; it implements endpoint.Host.
type Host struct {
	name, node, ns string
	idx            int
	gw, addr       netip.Addr
}

var _ endpoint.Host = (*Host)(nil)

func newHost(n *Network, i int, h HostSpec) *Host {
	gw, addr := hostNet(i)
	return &Host{name: h.Name, node: h.Node, ns: n.nsFor("h", i, h.Name), idx: i, gw: gw, addr: addr}
}

// Name is the host's namespace (for `ip netns exec`).
func (h *Host) Name() string { return h.ns }

// Node is the scenario node the host hangs off.
func (h *Host) Node() string { return h.node }

// Addr is the host's address.
func (h *Host) Addr() netip.Addr { return h.addr }

// Do runs f on a locked OS thread inside the host's namespace.
func (h *Host) Do(f func() error) error { return inNamespace(h.ns, f) }

// Command is a process inside the host's namespace.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.ns, name}, args...)...)
}

// Host returns the named host, or nil.
func (n *Network) Host(name string) endpoint.Host {
	if h, ok := n.hosts[name]; ok {
		return h
	}
	return nil
}
