//go:build linux

package ovstest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/netns"
	"golang.org/x/sys/unix"
)

// UDP opens a UDP socket bound to addr:port inside host i's namespace (a socket belongs to the
// namespace it was created in, whatever thread uses it later). It is closed when the test ends.
func (nw *Net) UDP(t testing.TB, i int, addr netip.Addr, port int) *net.UDPConn {
	t.Helper()
	var conn *net.UDPConn
	err := inNamespace(nw.Hosts[i].Namespace, func() error {
		c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, uint16(port))))
		conn = c
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// Send sends n datagrams marked with dscp to dst; each carries the mark in its first byte, so the
// receiver can count arrivals per mark (Count). The mark is set on the socket before the batch.
func Send(conn *net.UDPConn, dst netip.AddrPort, dscp, n int) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		if dst.Addr().Is4() {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, dscp<<2)
		} else {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_TCLASS, dscp<<2)
		}
	})
	if err = errors.Join(err, serr); err != nil {
		return fmt.Errorf("set dscp %d: %w", dscp, err)
	}
	payload := make([]byte, 100)
	payload[0] = byte(dscp)
	for range n {
		if _, err := conn.WriteToUDPAddrPort(payload, dst); err != nil {
			return err
		}
	}
	return nil
}

// Count reads datagrams until none has come for quiet and returns how many arrived per mark.
func Count(conn *net.UDPConn, quiet time.Duration) map[int]int { return CountAtLeast(conn, 0, quiet) }

// CountAtLeast reads datagrams until at least want have arrived (waiting up to 5 s for them, so
// that a busy machine does not lose the slow ones), then until none has come for quiet (so that
// packets that should not have arrived are seen), and returns how many arrived per mark.
func CountAtLeast(conn *net.UDPConn, want int, quiet time.Duration) map[int]int {
	got := map[int]int{}
	buf := make([]byte, 2048)
	deadline := time.Now().Add(5 * time.Second)
	for total := 0; ; total++ {
		until := time.Now().Add(quiet)
		if total < want {
			until = deadline
		}
		_ = conn.SetReadDeadline(until)
		n, _, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return got
		}
		if n > 0 {
			got[int(buf[0])]++
		}
	}
}

// inNamespace runs f inside namespace name (netns.Do).
func inNamespace(name string, f func() error) error { return netns.Do(name, f) }
