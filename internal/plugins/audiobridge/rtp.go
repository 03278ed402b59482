package audiobridge

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
)

// rtpEndpoint is a plain-RTP participant's socket (allow_rtp_participants): what arrives on it
// feeds the participant's Receiver, and the mix goes back from it (symmetric RTP) once the first
// packet has come, to the address join named or else to where that packet came from.
type rtpEndpoint struct {
	conn   *net.UDPConn
	md     *sessionMedia
	dst    *net.UDPAddr // nil: latch onto the first packet's source
	pt     uint8
	first  atomic.Bool
	onUp   func()
	closer sync.Once
}

// joinRTP joins a plain-RTP participant: a socket of its own, announced in the joined reply.
func (s *session) joinRTP(j *Join, r *room, set Participant, admin bool) (any, *plugin.JSEP, *Error) {
	codec := media.CodecByName(set.Codec)
	pt := staticPayloadType(codec)
	if j.RTP.PayloadType != nil && codec == media.CodecOpus {
		pt = *j.RTP.PayloadType & 0x7f
	}
	ip := s.p.localIP()
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
	if err != nil {
		return nil, nil, errorf(ErrUnknown, "Error creating the RTP socket (%v)", err)
	}
	ext := sfu.ExtIDs{}
	if j.RTP.AudioLevelExt != nil && *j.RTP.AudioLevelExt > 0 && *j.RTP.AudioLevelExt < 15 {
		ext.AudioLevel = uint8(*j.RTP.AudioLevelExt)
	}
	md := &sessionMedia{codec: codec, pt: uint8(pt)}
	md.recv = newInputReceiver(codec, ext, nil)
	md.out = newMixOut(codec, uint8(pt), nil)
	ep := &rtpEndpoint{conn: conn, md: md, pt: uint8(pt)}
	if j.RTP.IP != "" && j.RTP.Port > 0 {
		if a, err := net.ResolveUDPAddr("udp", net.JoinHostPort(j.RTP.IP, strconv.Itoa(j.RTP.Port))); err == nil {
			ep.dst = a
		}
	}
	md.rtp = ep
	m, reply, rerr := r.enter(s, "", j, set, admin, "joined")
	if rerr != nil {
		md.close()
		return nil, nil, rerr
	}
	ep.onUp = func() { m.room.setupChanged(m, true) }
	s.mu.Lock()
	s.member, s.media = m, md
	s.mu.Unlock()
	if err := m.attach(md); err != nil {
		return nil, nil, errorf(ErrUnknown, "%v", err)
	}
	go ep.read()
	joined := reply.(Joined)
	local := conn.LocalAddr().(*net.UDPAddr)
	joined.RTP = &RTPInfo{IP: local.IP.String(), Port: local.Port, PayloadType: pt}
	return joined, nil, nil
}

// staticPayloadType is the payload type a plain-RTP participant uses unless it names one: 0 and 8
// for G.711, Janus's 100 for Opus.
func staticPayloadType(c media.Codec) int {
	switch c {
	case media.CodecPCMU:
		return 0
	case media.CodecPCMA:
		return 8
	}
	return DefaultRTPOpusPT
}

// read feeds the participant's packets to its Receiver until the socket closes.
func (ep *rtpEndpoint) read() {
	buf := make([]byte, 1500)
	for {
		n, from, err := ep.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if !ep.first.Load() {
			if _, ok := media.ParseRTP(buf[:n]); !ok {
				continue
			}
			ep.start(from)
		}
		ep.md.recv.WriteRTP(0, buf[:n], sfu.Now())
	}
}

// start sends the mix back once the participant has sent a valid packet.
func (ep *rtpEndpoint) start(from netip.AddrPort) {
	ep.first.Store(true)
	dst := ep.dst
	if dst == nil {
		dst = net.UDPAddrFromAddrPort(from)
	}
	fwd, err := sfu.NewForwarderFrom(ep.conn, dst, sfu.ForwarderConfig{PayloadType: ep.pt})
	if err == nil {
		ep.md.out.src.Receiver().AddSink(fwd)
	}
	if ep.onUp != nil {
		ep.onUp()
	}
}

func (ep *rtpEndpoint) close() { ep.closer.Do(func() { _ = ep.conn.Close() }) }

// localIP is the address plain-RTP participants send to: plugins.audiobridge.local_ip, or the
// host's first non-loopback IPv4 address, or loopback.
func (p *Plugin) localIP() netip.Addr {
	if a, err := netip.ParseAddr(p.cfg.LocalIP); err == nil {
		return a
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			if ip, ok := netip.AddrFromSlice(n.IP.To4()); ok {
				return ip
			}
		}
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}
