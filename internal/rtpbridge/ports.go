package rtpbridge

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxPortTries bounds the search for a free pair: a range mostly in use is reported, not scanned.
const maxPortTries = 64

// openPair binds an RTP port (even) and its RTCP port (the next one) on the configured address,
// from a random start in the range so that concurrent sessions rarely collide.
func openPair(cfg Config) (rtp, rtcp *net.UDPConn, err error) {
	ip, err := bindAddr(cfg.LocalIP)
	if err != nil {
		return nil, nil, err
	}
	lo, hi := int(cfg.PortMin), int(cfg.PortMax)
	for try := range maxPortTries {
		port := 0
		if hi > 0 {
			evens := (hi-lo)/2 + 1
			if hi-lo < 1 {
				return nil, nil, fmt.Errorf("%w: range %d-%d holds no RTP/RTCP pair", ErrNoPorts, lo, hi)
			}
			port = (lo+1)&^1 + 2*((rand.IntN(evens)+try)%evens)
			if port+1 > hi {
				continue
			}
		}
		rtp, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(port))))
		if err != nil {
			continue
		}
		p := rtp.LocalAddr().(*net.UDPAddr).Port
		if p%2 == 1 || p == 65535 {
			_ = rtp.Close()
			continue
		}
		rtcp, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(p+1))))
		if err != nil {
			_ = rtp.Close()
			continue
		}
		return rtp, rtcp, nil
	}
	return nil, nil, fmt.Errorf("%w: %d-%d on %s", ErrNoPorts, lo, hi, ip)
}

func bindAddr(local string) (netip.Addr, error) {
	if local == "" {
		return netip.IPv4Unspecified(), nil
	}
	ip, err := netip.ParseAddr(local)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("local_ip %q: %w", local, err)
	}
	return ip, nil
}

// sdpAddr is the address the plain SDP announces: sdp_ip, else local_ip, else the host's first
// non-loopback IPv4 address (loopback when it has none).
func sdpAddr(cfg Config) (netip.Addr, error) {
	for _, s := range []string{cfg.SDPIP, cfg.LocalIP} {
		if s == "" {
			continue
		}
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("address %q: %w", s, err)
		}
		if !ip.IsUnspecified() {
			return ip, nil
		}
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP.To4()); ok && !ip.IsLoopback() && ip.IsValid() {
				return ip, nil
			}
		}
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
}

// setDSCP marks what conn sends (IPv4 TOS / IPv6 traffic class).
func setDSCP(conn *net.UDPConn, dscp int) error {
	if dscp == 0 {
		return nil
	}
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), syscall.IPPROTO_IP, unix.IP_TOS, dscp<<2)
		if serr != nil {
			serr = unix.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, unix.IPV6_TCLASS, dscp<<2)
		}
	})
	if err != nil {
		return err
	}
	return serr
}
