package sfuflow

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/pion/transport/v4"
	"github.com/pion/transport/v4/stdnet"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// hostNet is the network of one emulated host for Pion: a namespace is a property of the OS
// thread, and Pion gathers and opens sockets on goroutines of its own, so every call that
// enumerates interfaces or creates a socket runs in the host's namespace (endpoint.Host.Do).
// Sockets stay in the namespace they were created in; reading and writing them needs nothing.
type hostNet struct {
	*stdnet.Net
	h endpoint.Host
}

var _ transport.Net = (*hostNet)(nil)

func newHostNet(h endpoint.Host) (*hostNet, error) {
	n := &hostNet{h: h}
	err := h.Do(func() (err error) {
		n.Net, err = stdnet.NewNet() // lists the interfaces of the host's namespace
		return err
	})
	return n, err
}

// in runs f in the host's namespace and returns its results.
func in[T any](h endpoint.Host, f func() (T, error)) (T, error) {
	var v T
	err := h.Do(func() (err error) {
		v, err = f()
		return err
	})
	return v, err
}

func (n *hostNet) ListenPacket(network, address string) (net.PacketConn, error) {
	return in(n.h, func() (net.PacketConn, error) { return n.Net.ListenPacket(network, address) })
}

func (n *hostNet) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	return in(n.h, func() (transport.UDPConn, error) { return n.Net.ListenUDP(network, laddr) })
}

func (n *hostNet) ListenTCP(network string, laddr *net.TCPAddr) (transport.TCPListener, error) {
	return in(n.h, func() (transport.TCPListener, error) { return n.Net.ListenTCP(network, laddr) })
}

func (n *hostNet) Dial(network, address string) (net.Conn, error) {
	return in(n.h, func() (net.Conn, error) { return n.Net.Dial(network, address) })
}

func (n *hostNet) DialUDP(network string, laddr, raddr *net.UDPAddr) (transport.UDPConn, error) {
	return in(n.h, func() (transport.UDPConn, error) { return n.Net.DialUDP(network, laddr, raddr) })
}

func (n *hostNet) DialTCP(network string, laddr, raddr *net.TCPAddr) (transport.TCPConn, error) {
	return in(n.h, func() (transport.TCPConn, error) { return n.Net.DialTCP(network, laddr, raddr) })
}

// hostHTTP is an HTTP client whose connections are opened in the host's namespace (the Janus
// API's requests then cross the emulated path like the media).
func hostHTTP(h endpoint.Host) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return in(h, func() (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, network, addr) })
	}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: dial,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}}
}
