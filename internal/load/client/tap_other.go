//go:build !(linux && (amd64 || arm64))

package client

import (
	"net"
	"net/netip"
)

// batchReader: without recvmmsg the socket is read one datagram at a time (tapConn's own loop).
type batchReader struct{}

func newBatchReader(*net.UDPConn) *batchReader { return nil }

func (*batchReader) readFrom([]byte, *tap) (int, netip.AddrPort, error) {
	panic("unreachable")
}
