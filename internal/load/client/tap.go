package client

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/transport/v4"

	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// A light receiver (Receiver "light", the default) is a subscriber PeerConnection that completes
// ICE and DTLS with Pion but counts the media at its socket, from the clear RTP header of each
// SRTP packet, without decrypting it: the tap below sits between the socket and Pion's ICE agent.
// Each stream's packets go to Pion whole until the stream is decodable (its first keyframe, which
// needs the payload), then only one in sampleEvery, which Pion decrypts (so the SRTP
// authentication is checked) and the subscriber's track reader verifies (a VP8 payload
// descriptor, an Opus TOC) without counting it again. STUN, DTLS, SRTCP, and RTP of streams the
// tap does not know (RTX repairs, streams before Pion announced them) go to Pion unchanged.
//
// Swallowed packets never reach Pion's interceptors, so a light PeerConnection has none: the tap
// produces the feedback a browser would (feedback.go): transport-wide CC from the clear
// transport sequence numbers every 100 ms, receiver reports every second, and NACKs for gaps.

// sampleEvery is how often a light stream's packet goes through Pion anyway, to be decrypted and
// checked.
const sampleEvery = 32

// tap is one light PeerConnection's view of its media.
type tap struct {
	now        func() time.Duration
	senderSSRC uint32 // the SSRC the receiver's RTCP comes from

	mu      sync.Mutex
	streams map[uint32]*Stream // by SSRC, once Pion announced the track
	twccID  uint8              // the transport-wide CC extension's id; 0 until negotiated
	twcc    *twcc.Recorder
	twccNew bool // packets recorded since the last feedback

	// swallowed counts packets counted here and not given to Pion; reads and datagrams are the
	// socket's recvmmsg calls and what they returned.
	swallowed, reads, datagrams atomic.Uint64
}

func newTap(now func() time.Duration, senderSSRC uint32) *tap {
	return &tap{now: now, senderSSRC: senderSSRC, streams: map[uint32]*Stream{}, twcc: twcc.NewRecorder(senderSSRC)}
}

// setTWCC sets the negotiated id of the transport-wide sequence number extension.
func (t *tap) setTWCC(id uint8) {
	t.mu.Lock()
	t.twccID = id
	t.mu.Unlock()
}

// register makes the tap count ssrc's packets into st (once st is light).
func (t *tap) register(ssrc uint32, st *Stream) {
	st.mu.Lock()
	st.light.ssrc = ssrc
	st.mu.Unlock()
	t.mu.Lock()
	t.streams[ssrc] = st
	t.mu.Unlock()
}

// registered returns the streams the tap counts.
func (t *tap) registered() []*Stream {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*Stream, 0, len(t.streams))
	for _, st := range t.streams {
		out = append(out, st)
	}
	return out
}

// swallow looks at one datagram read from the socket now and reports whether the tap consumed
// it (Pion never sees it). It allocates nothing.
func (t *tap) swallow(b []byte) bool { return t.swallowAt(b, t.now()) }

// swallowAt is swallow for a datagram that reached the socket at time at.
func (t *tap) swallowAt(b []byte, at time.Duration) bool {
	// RFC 7983: 128–191 is RTP or RTCP; RTCP's packet types 192–223 (200–206 in practice) sit
	// where RTP has the marker bit and payload types 64–95, which WebRTC does not use for RTP.
	if len(b) < 12 || b[0] < 128 || b[0] > 191 || b[1] >= 192 && b[1] <= 223 {
		return false
	}
	h, profile, ext, err := rtpstats.ParseSRTPHeader(b)
	if err != nil {
		return false
	}
	t.mu.Lock()
	if t.twccID != 0 {
		if v := rtpstats.HeaderExtension(profile, ext, t.twccID); len(v) >= 2 {
			t.twcc.Record(h.SSRC, uint16(v[0])<<8|uint16(v[1]), int64(at/time.Microsecond))
			t.twccNew = true
		}
	}
	st := t.streams[h.SSRC]
	t.mu.Unlock()
	if st == nil {
		return false
	}
	if st.atTap(h, len(b), at) {
		t.swallowed.Add(1)
		return true
	}
	return false
}

// receiveBuffer is a light receiver's socket buffer.
const receiveBuffer = 4 << 20

// tapNet is a transport.Net whose UDP sockets pass what they read through a tap.
type tapNet struct {
	transport.Net
	tap *tap
}

func (n tapNet) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	c, err := n.Net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	// A shared machine can stall the reader for a few hundred milliseconds; the socket holds
	// that much media rather than drop it (the kernel caps the size at net.core.rmem_max).
	_ = c.SetReadBuffer(receiveBuffer)
	tc := &tapConn{UDPConn: c, tap: n.tap}
	if udp, ok := c.(*net.UDPConn); ok && udp.LocalAddr().(*net.UDPAddr).IP.To4() != nil {
		tc.udp, tc.batch = udp, newBatchReader(udp)
	}
	return tc, nil
}

// tapConn is a socket whose reads skip what the tap swallows. ICE reads it from one goroutine
// per candidate, through ReadFromAddrPort (allocation-free on a real socket) when it can; on
// Linux that reads every datagram queued on the socket with one recvmmsg (tap_mmsg.go).
type tapConn struct {
	transport.UDPConn
	udp   *net.UDPConn // the socket itself, when it is a real IPv4 one
	batch *batchReader // its recvmmsg reader, where there is one
	tap   *tap
}

func (c *tapConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.UDPConn.ReadFrom(b)
		if err != nil || !c.tap.swallow(b[:n]) {
			return n, addr, err
		}
	}
}

// ReadFromAddrPort and WriteToAddrPort are ice.AddrPortReaderWriter, which ICE prefers.
func (c *tapConn) ReadFromAddrPort(b []byte) (int, netip.AddrPort, error) {
	if c.udp == nil {
		n, addr, err := c.ReadFrom(b)
		if err != nil {
			return n, netip.AddrPort{}, err
		}
		ua, _ := addr.(*net.UDPAddr)
		if ua == nil {
			return n, netip.AddrPort{}, nil
		}
		return n, ua.AddrPort(), nil
	}
	if c.batch != nil {
		return c.batch.readFrom(b, c.tap)
	}
	for {
		n, addr, err := c.udp.ReadFromUDPAddrPort(b)
		if err != nil || !c.tap.swallow(b[:n]) {
			return n, addr, err
		}
	}
}

func (c *tapConn) WriteToAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	if c.udp == nil {
		return c.WriteTo(b, net.UDPAddrFromAddrPort(addr))
	}
	return c.udp.WriteToUDPAddrPort(b, addr)
}
