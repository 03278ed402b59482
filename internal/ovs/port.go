//go:build linux

package ovs

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// AddPort attaches an existing interface (one end of a veth the caller created in the switch's
// namespace) to the bridge; the userspace datapath reads and writes it with AF_PACKET. AddPort
// sets it up and turns its transmit checksum offload off.
//
// Checksum offload: a packet sent by a host with transmit checksum offload on crosses the veth with
// a partial checksum that the userspace datapath never completes, so UDP and TCP arrive corrupt
// (ARP and ICMP work, which makes it confusing). AddPort covers the port's own side; the caller
// must turn offload off on every interface that sends into the switch — the far ends of the
// ports — with DisableTxOffload.
func (s *Switch) AddPort(ctx context.Context, name string) error {
	argv := s.argv("ip", "link", "set", name, "up")
	if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("ovs: ip link set %s up: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	if err := DisableTxOffload(ctx, s.cfg.Namespace, name); err != nil {
		return err
	}
	_, err := s.vsctl(ctx, "add-port", s.cfg.Bridge, name)
	return err
}

// DelPort detaches an interface from the bridge.
func (s *Switch) DelPort(ctx context.Context, name string) error {
	_, err := s.vsctl(ctx, "del-port", s.cfg.Bridge, name)
	return err
}

// DisableTxOffload turns transmit checksum offload off on an interface in a namespace (empty: the
// caller's), with ethtool -K IFACE tx off (see AddPort).
func DisableTxOffload(ctx context.Context, namespace, iface string) error {
	argv := []string{"ethtool", "-K", iface, "tx", "off"}
	if namespace != "" {
		argv = append([]string{"ip", "netns", "exec", namespace}, argv...)
	}
	if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("ovs: ethtool -K %s tx off (namespace %q): %v: %s", iface, namespace, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Vsctl runs ovs-vsctl against the switch's database (for settings this package has no method
// for, e.g. a flow table's size limit) and returns its output.
func (s *Switch) Vsctl(ctx context.Context, args ...string) (string, error) {
	return s.vsctl(ctx, args...)
}
