package udpbatch

import (
	"fmt"
	"net"
	"sync"

	"github.com/pion/transport/v4"
	"github.com/pion/transport/v4/stdnet"
)

// Net is the host network for Pion (transport.Net) with UDP sockets that batch their writes. Give
// it to ice.NewMultiUDPMuxFromPort (UDPMuxFromPortWithNet): the mux then opens its shared sockets
// through it, and Hold/Release on the Net group the writes of every one of them.
type Net struct {
	*stdnet.Net

	marks Marks

	mu    sync.Mutex
	conns []*Conn
}

// Marks is the mark table of every socket of n: what the SFU marks there leaves with that DSCP.
func (n *Net) Marks() *Marks { return &n.marks }

// NewNet returns the host network with batching UDP sockets.
func NewNet() (*Net, error) {
	n, err := stdnet.NewNet()
	if err != nil {
		return nil, err
	}
	return &Net{Net: n}, nil
}

// ListenUDP opens a batching UDP socket.
func (n *Net) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	c, err := net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	b, err := New(c)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("udpbatch: %w", err)
	}
	b.SetMarks(&n.marks)
	n.mu.Lock()
	n.conns = append(n.conns, b)
	n.mu.Unlock()
	return b, nil
}

// Hold starts a group of writes on every socket (see Conn.Hold).
func (n *Net) Hold() {
	for _, c := range n.sockets() {
		c.Hold()
	}
}

// Release ends a group of writes on every socket (see Conn.Release).
func (n *Net) Release() {
	for _, c := range n.sockets() {
		c.Release()
	}
}

// Stats sums the counters of every socket.
func (n *Net) Stats() Stats {
	var s Stats
	for _, c := range n.sockets() {
		cs := c.Stats()
		s.Direct += cs.Direct
		s.Batched += cs.Batched
		s.Calls += cs.Calls
		s.Errors += cs.Errors
	}
	return s
}

// sockets returns the open sockets; the slice is only appended to, so a copy of its header is
// safe to range over without the lock.
func (n *Net) sockets() []*Conn {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.conns
}

// Batcher groups writes that should leave together: Hold before a fan-out, Release after.
type Batcher interface {
	Hold()
	Release()
}

// None is the Batcher that does nothing (sockets that write one datagram at a time).
var None Batcher = none{}

type none struct{}

func (none) Hold()    {}
func (none) Release() {}
