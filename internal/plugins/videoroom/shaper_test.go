package videoroom_test

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/transport/v4"
	"github.com/pion/transport/v4/stdnet"
)

// linkShaper is an in-process bottleneck on what a test client receives: packets queue at the
// link rate behind a drop-tail queue of at most maxDelay, so a cut causes queueing delay first
// and loss second, as a real bottleneck does. Rate 0 means unlimited. It plays the network
// between strata and one subscriber.
type linkShaper struct {
	rate     atomic.Int64 // bit/s
	maxDelay time.Duration

	dropped, delivered atomic.Uint64
}

func newLinkShaper(maxDelay time.Duration) *linkShaper { return &linkShaper{maxDelay: maxDelay} }

// setRate changes the link rate (0: unlimited).
func (s *linkShaper) setRate(bps int64) { s.rate.Store(bps) }

// net returns a transport.Net whose UDP sockets are shaped.
func (s *linkShaper) net() (transport.Net, error) {
	n, err := stdnet.NewNet()
	if err != nil {
		return nil, err
	}
	return &shapedNet{Net: n, s: s}, nil
}

type shapedNet struct {
	*stdnet.Net
	s *linkShaper
}

func (n *shapedNet) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	c, err := n.Net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	return newShapedConn(c, n.s), nil
}

func (n *shapedNet) ListenPacket(network, address string) (net.PacketConn, error) {
	addr, err := net.ResolveUDPAddr(network, address)
	if err != nil {
		return nil, err
	}
	return n.ListenUDP(network, addr)
}

type shapedPacket struct {
	b    []byte
	from net.Addr
	at   time.Time // when it leaves the bottleneck
}

// shapedConn delivers received packets at the shaper's rate.
type shapedConn struct {
	transport.UDPConn
	s   *linkShaper
	out chan shapedPacket

	mu       sync.Mutex
	nextFree time.Time // when the link finishes sending what is queued
	closed   chan struct{}
	once     sync.Once
}

func newShapedConn(c transport.UDPConn, s *linkShaper) *shapedConn {
	sc := &shapedConn{UDPConn: c, s: s, out: make(chan shapedPacket, 4096), closed: make(chan struct{})}
	go sc.pump()
	return sc
}

// pump reads the real socket and schedules each packet through the bottleneck.
func (c *shapedConn) pump() {
	buf := make([]byte, 1500)
	for {
		n, from, err := c.UDPConn.ReadFrom(buf)
		if err != nil {
			c.once.Do(func() { close(c.closed) })
			return
		}
		now := time.Now()
		at := now
		if rate := c.s.rate.Load(); rate > 0 {
			c.mu.Lock()
			start := c.nextFree
			if start.Before(now) {
				start = now
			}
			if start.Sub(now) > c.s.maxDelay {
				c.mu.Unlock()
				c.s.dropped.Add(1)
				continue
			}
			c.nextFree = start.Add(time.Duration(float64(n*8) / float64(rate) * float64(time.Second)))
			at = c.nextFree
			c.mu.Unlock()
		}
		select {
		case c.out <- shapedPacket{append([]byte(nil), buf[:n]...), from, at}:
		default:
			c.s.dropped.Add(1)
		}
	}
}

func (c *shapedConn) ReadFrom(p []byte) (int, net.Addr, error) {
	select {
	case pkt := <-c.out:
		if d := time.Until(pkt.at); d > 0 {
			time.Sleep(d)
		}
		c.s.delivered.Add(1)
		return copy(p, pkt.b), pkt.from, nil
	case <-c.closed:
		return 0, nil, net.ErrClosed
	}
}

func (c *shapedConn) Read(p []byte) (int, error) {
	n, _, err := c.ReadFrom(p)
	return n, err
}

func (c *shapedConn) ReadFromUDP(p []byte) (int, *net.UDPAddr, error) {
	n, from, err := c.ReadFrom(p)
	if err != nil {
		return n, nil, err
	}
	ua, ok := from.(*net.UDPAddr)
	if !ok {
		return n, nil, errors.New("shaper: not a UDP address")
	}
	return n, ua, nil
}

func (c *shapedConn) Close() error {
	err := c.UDPConn.Close()
	c.once.Do(func() { close(c.closed) })
	return err
}
