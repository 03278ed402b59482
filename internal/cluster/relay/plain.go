package relay

// Plain RTP links (transport rtp), for networks between nodes that are trusted: no ICE, no DTLS,
// no SRTP. The relay has one UDP socket for all its links and tells the links' packets apart by
// their source address (packets from anywhere else are dropped); RTP and RTCP share it (RFC 5761).
// The origin writes each layer's packets straight to the socket, the edge's socket reader hands
// them to the layer's Receiver. Nothing detects a dead peer but the cluster's membership
// (PeerGone) and Close.

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/sfu"
)

// plainSocket is the relay's UDP socket for plain links.
type plainSocket struct {
	conn *net.UDPConn
	addr string // as the other nodes reach it: "ip:port"

	mu    sync.RWMutex
	links map[netip.AddrPort]*plainLink
}

// plainLink is the plain side of one link: its peer's address and the streams on it by SSRC.
type plainLink struct {
	sock *plainSocket
	peer netip.AddrPort

	mu   sync.RWMutex
	outs map[uint32]plainOut // what this node sends: the edge's RTCP about it
	ins  map[uint32]plainIn  // what this node receives
}

type plainOut struct {
	so    *streamOut
	layer int
	lo    *layerOut
}

type plainIn struct {
	si    *sharedImport
	s     *streamIn
	layer int
	li    *layerIn
}

// listenPlain opens the plain links' socket on the configured address and port (the first free
// one of a range).
func listenPlain(cfg Config) (*plainSocket, error) {
	ip := net.ParseIP(cfg.Address)
	if ip == nil {
		return nil, errors.New("relay: plain RTP links need the node's address (cluster.relay.address)")
	}
	var conn *net.UDPConn
	var err error
	for port := int(cfg.PortMin); ; port++ {
		conn, err = net.ListenUDP("udp", &net.UDPAddr{IP: ip, Port: port})
		if err == nil || port >= int(cfg.PortMax) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("relay: plain RTP socket on %s ports %d-%d: %w", cfg.Address, cfg.PortMin, cfg.PortMax, err)
	}
	s := &plainSocket{conn: conn, addr: conn.LocalAddr().String(), links: map[netip.AddrPort]*plainLink{}}
	go s.read()
	return s, nil
}

func (s *plainSocket) Close() error { return s.conn.Close() }

// read hands every datagram to the link of its source address (nothing allocated per packet).
func (s *plainSocket) read() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil || n < 12 {
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		s.mu.RLock()
		pl := s.links[from]
		s.mu.RUnlock()
		if pl != nil {
			pl.receive(buf[:n], sfu.Now())
		}
	}
}

// connect makes a plain link to the peer's socket at addr.
func (s *plainSocket) connect(addr string) (*plainLink, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("relay: plain RTP peer address %q: %w", addr, err)
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	pl := &plainLink{sock: s, peer: ap, outs: map[uint32]plainOut{}, ins: map[uint32]plainIn{}}
	s.mu.Lock()
	s.links[ap] = pl
	s.mu.Unlock()
	return pl, nil
}

func (pl *plainLink) disconnect() {
	pl.sock.mu.Lock()
	if pl.sock.links[pl.peer] == pl {
		delete(pl.sock.links, pl.peer)
	}
	pl.sock.mu.Unlock()
}

// receive takes one datagram from the peer: RTCP about what this node sends, or RTP of an
// imported layer.
func (pl *plainLink) receive(b []byte, now time.Duration) {
	ssrc := uint32(b[8])<<24 | uint32(b[9])<<16 | uint32(b[10])<<8 | uint32(b[11])
	if b[1] >= 192 && b[1] <= 223 { // RTCP (RFC 5761): the feedback's media SSRC
		pl.mu.RLock()
		out, ok := pl.outs[ssrc]
		pl.mu.RUnlock()
		if ok {
			out.so.handleRTCP(out.layer, out.lo, b, now)
		}
		return
	}
	pl.mu.RLock()
	in, ok := pl.ins[ssrc]
	pl.mu.RUnlock()
	if ok {
		in.si.deliver(in.s, in.layer, in.li, b, now)
	}
}

func (pl *plainLink) addOut(ssrc uint32, o plainOut) {
	pl.mu.Lock()
	pl.outs[ssrc] = o
	pl.mu.Unlock()
}

func (pl *plainLink) addIn(ssrc uint32, in plainIn) {
	pl.mu.Lock()
	pl.ins[ssrc] = in
	pl.mu.Unlock()
}

func (pl *plainLink) remove(ssrc uint32) {
	pl.mu.Lock()
	delete(pl.outs, ssrc)
	delete(pl.ins, ssrc)
	pl.mu.Unlock()
}

func (pl *plainLink) writeRTCP(pkts []rtcp.Packet) error {
	b, err := rtcp.Marshal(pkts)
	if err != nil {
		return err
	}
	_, err = pl.sock.conn.WriteToUDPAddrPort(b, pl.peer)
	return err
}

// plainWriter writes one layer's packets (and its retransmissions, hence the lock) to the peer.
type plainWriter struct {
	pl  *plainLink
	mu  sync.Mutex
	buf [1500]byte
}

func (w *plainWriter) WriteRTP(h *rtp.Header, payload []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := h.MarshalTo(w.buf[:])
	if err != nil {
		return 0, err
	}
	if n+len(payload) > len(w.buf) {
		return 0, errors.New("relay: packet larger than the link's MTU")
	}
	n += copy(w.buf[n:], payload)
	return w.pl.sock.conn.WriteToUDPAddrPort(w.buf[:n], w.pl.peer)
}

func (w *plainWriter) Write(b []byte) (int, error) {
	return w.pl.sock.conn.WriteToUDPAddrPort(b, w.pl.peer)
}
