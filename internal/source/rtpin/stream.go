package rtpin

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// maxLayers is how many sockets a stream has at most (simulcast: port, port2, port3).
const maxLayers = 3

// bufSize is the read buffer of an RTP socket: larger than any RTP packet strata caches, so that a
// datagram too long for the cache reaches the receiver whole and is counted there, not truncated.
const bufSize = 2048

// dataBufSize is the read buffer of a data socket: the largest UDP datagram.
const dataBufSize = 65535

// stream is one stream's sockets and state.
type stream struct {
	cfg   Stream
	track source.Track
	recv  *sfu.Receiver
	data  *DataTrack
	conns [maxLayers]*net.UDPConn
	rtcp  *net.UDPConn

	// ssrc is each layer's current SSRC, written only by its reader.
	ssrc     [maxLayers]uint32
	ssrcSeen [maxLayers]bool

	// rtcpFrom is where the source's RTCP came from: keyframe requests go there.
	rtcpFrom atomic.Pointer[netip.AddrPort]
	firMu    sync.Mutex
	firSeq   uint8
	pli      [pliLen + firLen]byte

	lastAt                                atomic.Int64
	ssrcChanges, rtcpIn, kfSent, kfUnsent atomic.Uint64
	messages                              atomic.Uint64
}

func (s *Source) openStream(cfg Stream, rc sfu.ReceiverConfig) (*stream, error) {
	st := &stream{cfg: cfg}
	st.track = source.Track{Kind: cfg.Kind, MID: cfg.MID, Label: cfg.Label, Codec: cfg.Codec, PT: cfg.PT, Fmtp: cfg.Fmtp}
	addr, err := s.listenAddr(cfg)
	if err != nil {
		return nil, err
	}
	ports := []int{cfg.Port}
	switch cfg.Kind {
	case source.Audio, source.Video:
		if cfg.Simulcast && cfg.Kind == source.Video {
			ports = append(ports, cfg.Port2, cfg.Port3)
		}
		rc.ID, rc.Codec, rc.Simulcast = s.cfg.ID+"/"+cfg.MID, cfg.Codec, cfg.Simulcast && cfg.Kind == source.Video
		st.recv = sfu.NewReceiver(rc, st.requestKeyframe)
		st.track.Recv = st.recv
	case source.Data:
		st.data = newDataTrack(cfg.TextData, cfg.BufferMsg)
	default:
		return nil, errors.New("unknown kind")
	}
	for l, port := range ports {
		if st.conns[l], err = listen(addr, port, cfg.Mcast, cfg.Iface); err != nil {
			st.closeSockets()
			return nil, err
		}
	}
	if cfg.RTCP && st.recv != nil {
		if st.rtcp, err = listen(addr, cfg.RTCPPort, "", ""); err != nil {
			st.closeSockets()
			return nil, err
		}
	}
	return st, nil
}

// listen binds a UDP socket on addr:port, or joins the multicast group mcast on port.
func listen(addr netip.Addr, port int, mcast, iface string) (*net.UDPConn, error) {
	if port < 0 || port > 65535 {
		return nil, errors.New("port out of range")
	}
	if mcast != "" {
		group, err := netip.ParseAddr(mcast)
		if err != nil || !group.IsMulticast() {
			return nil, errors.New("mcast " + mcast + " is not a multicast address")
		}
		var ifi *net.Interface
		if iface != "" {
			if ifi, err = net.InterfaceByName(iface); err != nil {
				ifi = nil // an address rather than a name: the system's default interface
			}
		}
		return net.ListenMulticastUDP("udp", ifi, net.UDPAddrFromAddrPort(netip.AddrPortFrom(group, uint16(port))))
	}
	return net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, uint16(port))))
}

func (st *stream) closeSockets() {
	for _, c := range st.conns {
		if c != nil {
			_ = c.Close()
		}
	}
	if st.rtcp != nil {
		_ = st.rtcp.Close()
	}
}

// startReaders starts one goroutine per socket.
func (s *Source) startReaders(st *stream) {
	for l, c := range st.conns {
		if c == nil {
			continue
		}
		s.wg.Add(1)
		if st.data != nil {
			go s.readData(st, c)
		} else {
			go s.readRTP(st, c, l)
		}
	}
	if st.rtcp != nil {
		s.wg.Add(1)
		go s.readRTCP(st)
	}
}

// readRTP feeds one layer's receiver until the socket closes. The buffer is reused: the receiver
// and its sinks only read a packet during the call.
func (s *Source) readRTP(st *stream, c *net.UDPConn, layer int) {
	defer s.wg.Done()
	buf := make([]byte, bufSize)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if s.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP port unreachable reported on the socket: keep serving
		}
		st.handle(layer, buf[:n], from, sfu.Now())
	}
}

// handle takes one datagram of an RTP socket. It allocates nothing.
func (st *stream) handle(layer int, pkt []byte, from netip.AddrPort, now time.Duration) {
	st.lastAt.Store(int64(now))
	if isRTCP(pkt) {
		// RTCP multiplexed on the RTP port (rtcp-mux senders): learn the address requests go to.
		st.rtcpArrived(from)
		return
	}
	if len(pkt) >= 12 && pkt[0]>>6 == 2 {
		st.learnSSRC(layer, binary.BigEndian.Uint32(pkt[8:12]))
	}
	st.recv.WriteRTP(layer, pkt, now)
}

// learnSSRC follows the sender's SSRC on a layer. A new SSRC is a new stream (the sender
// restarted): keyframe requests name it, and the receiver's sinks re-anchor their numbering and
// wait for its first keyframe.
func (st *stream) learnSSRC(layer int, ssrc uint32) {
	if st.ssrcSeen[layer] && st.ssrc[layer] == ssrc {
		return
	}
	if st.ssrcSeen[layer] {
		st.ssrcChanges.Add(1)
		st.recv.SetMuted(true)
		st.recv.SetLayerSSRC(layer, ssrc)
		st.recv.SetMuted(false)
	} else {
		st.recv.SetLayerSSRC(layer, ssrc)
	}
	st.ssrc[layer], st.ssrcSeen[layer] = ssrc, true
}

func (st *stream) stats() Stats {
	return Stats{
		LastReceived: st.lastAt.Load(), SSRCChanges: st.ssrcChanges.Load(), RTCPReceived: st.rtcpIn.Load(),
		KeyframeRequestsSent: st.kfSent.Load(), KeyframeRequestsUnsent: st.kfUnsent.Load(), Messages: st.messages.Load(),
	}
}
