package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ClusterRelay configures the media relay between the nodes of a cluster (cluster.relay;
// internal/cluster/relay): one ICE + DTLS-SRTP link per pair of nodes.
type ClusterRelay struct {
	// Address is the IP the other nodes reach this node's links at: an address of this host (only
	// its interface is used) or, behind a 1:1 NAT, the public one. Empty: every interface's.
	Address string `yaml:"address"`
	// Ports are the links' UDP ports: "port" (every link on one socket) or "min-max" (a port per
	// link: as many as the node has peers). Empty: any port the system gives.
	Ports string `yaml:"ports"`
	// Transport is "srtp" (DTLS-SRTP over ICE) or "rtp": plain RTP on one UDP socket (the address
	// and the first free port), only for networks between nodes that are trusted. Every node of a
	// cluster uses the same.
	Transport string `yaml:"transport"`
}

// PortRange returns the relay's ports (0, 0: any; equal: one shared port).
func (r ClusterRelay) PortRange() (lo, hi uint16, err error) {
	if p := strings.TrimSpace(r.Ports); p != "" && !strings.Contains(p, "-") {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return 0, 0, fmt.Errorf("%q is not a port or a port range (min-max)", r.Ports)
		}
		return uint16(n), uint16(n), nil
	}
	return ParsePortRange(r.Ports)
}

func (r ClusterRelay) validate() []error {
	var errs []error
	if r.Address != "" && net.ParseIP(r.Address) == nil {
		errs = append(errs, fmt.Errorf("cluster.relay.address: %q is not an IP address", r.Address))
	}
	if _, _, err := r.PortRange(); err != nil {
		errs = append(errs, fmt.Errorf("cluster.relay.ports: %w", err))
	}
	switch r.Transport {
	case "srtp":
	case "rtp":
		if r.Address == "" {
			errs = append(errs, errors.New("cluster.relay.address: required with transport rtp (the plain socket's address)"))
		}
	default:
		errs = append(errs, fmt.Errorf("cluster.relay.transport: %q is neither srtp nor rtp", r.Transport))
	}
	return errs
}
