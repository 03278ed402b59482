package rtpbridge

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/srtp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// leg is one medium (audio or video) of the bridge: its RTP/RTCP sockets towards the plain peer,
// the Receiver of what the browser sends with the plainSender as its sink, and the Receiver of
// what the plain peer sends with a DownTrack towards the browser.
type leg struct {
	s     *Session
	kind  webrtc.RTPCodecType
	rtp   *net.UDPConn
	rtcp  *net.UDPConn
	port  int
	local *media.SDESCrypto // strata's key, offered or answered; nil without SRTP

	// Negotiated; set on the negotiating goroutine while no media flows through them, read by
	// the reader under Session.mu or through the atomics.
	offered      []webrtc.RTPCodecParameters // the browser's formats offered to the plain peer
	browserCodec webrtc.RTPCodecParameters
	plainCodec   webrtc.RTPCodecParameters
	plainDTMF    int    // the plain peer's telephone-event payload type, -1 without
	dtmfRate     uint32 // its clock rate: the codec's or 8000 (event durations count in it)
	browserDTMF  *webrtc.RTPCodecParameters
	rtcpMux      atomic.Bool            // the peer's SDP asked for RTCP on the RTP port
	mline        int                    // the m-line's index in the plain SDP
	rejected     bool                   // the plain peer refused it: kept as a port-0 m-line
	tr           *webrtc.RTPTransceiver // the browser side's transceiver

	remote     atomic.Pointer[netip.AddrPort] // RTP, latched to where the peer's media comes from
	remoteRTCP atomic.Pointer[netip.AddrPort]
	latched    atomic.Bool
	inSRTP     atomic.Pointer[srtp.Context] // decrypts the peer's RTP (the RTP reader's)
	inSRTCP    atomic.Pointer[srtp.Context] // decrypts the peer's RTCP (the RTCP reader's)
	firCount   atomic.Uint32
	dtmfPT     atomic.Int32 // the reader's copy of plainDTMF

	fromBrowser *sfu.Receiver
	out         *plainSender
	fromPlain   *sfu.Receiver
	down        *sfu.DownTrack
	sender      *webrtc.RTPSender

	in      inStats
	dtmf    dtmfDetector
	reports reportState

	done      chan struct{}
	startOnce sync.Once
	stopOnce  sync.Once
	wg        sync.WaitGroup
}

func newLeg(s *Session, kind webrtc.RTPCodecType) (*leg, error) {
	rtpConn, rtcpConn, err := openPair(s.cfg)
	if err != nil {
		return nil, err
	}
	dscp := s.cfg.DSCPAudio
	if kind == webrtc.RTPCodecTypeVideo {
		dscp = s.cfg.DSCPVideo
	}
	for _, c := range []*net.UDPConn{rtpConn, rtcpConn} {
		if err := setDSCP(c, dscp); err != nil {
			s.log.Debug("setting DSCP", "err", err)
		}
	}
	l := &leg{
		s: s, kind: kind, rtp: rtpConn, rtcp: rtcpConn, port: rtpConn.LocalAddr().(*net.UDPAddr).Port,
		plainDTMF: -1, done: make(chan struct{}),
	}
	l.dtmfPT.Store(-1)
	if s.opts.SRTP != SRTPOff {
		suite := media.SuiteAES80
		if s.opts.SRTPProfile == ProfileAES32 {
			suite = media.SuiteAES32
		}
		l.local = newKey(1, suite)
	}
	return l, nil
}

func (l *leg) video() bool { return l.kind == webrtc.RTPCodecTypeVideo }

// start runs the readers of both sockets and the report loop, once the peer's address is known.
func (l *leg) start() {
	l.wg.Add(3)
	go l.readRTP()
	go l.readRTCPSocket()
	go l.reportLoop()
}

// stop closes the sockets, which ends the readers, and waits for them.
func (l *leg) stop() {
	l.stopOnce.Do(func() {
		close(l.done)
		_ = l.rtp.Close()
		_ = l.rtcp.Close()
		l.wg.Wait()
		if l.fromBrowser != nil {
			l.fromBrowser.Close()
		}
		if l.down != nil {
			l.down.Stop()
		}
		if l.fromPlain != nil {
			l.fromPlain.Close()
		}
	})
}

// setRemote takes the peer's addresses from its SDP; media arriving from elsewhere latches them
// again (symmetric RTP behind a NAT).
func (l *leg) setRemote(m *media.PlainMedia) {
	rtpAddr := netip.AddrPortFrom(m.Addr.Unmap(), uint16(m.Port))
	rtcpAddr := netip.AddrPortFrom(m.Addr.Unmap(), uint16(m.RTCPPort))
	if m.RTCPMux {
		rtcpAddr = rtpAddr
	}
	l.rtcpMux.Store(m.RTCPMux)
	l.remote.Store(&rtpAddr)
	l.remoteRTCP.Store(&rtcpAddr)
	l.latched.Store(false)
}

// setRemoteKey installs the peer's SDES key (nil: plain RTP both ways) and strata's for sending.
func (l *leg) setKeys(remote *media.SDESCrypto) error {
	if remote == nil || l.local == nil {
		l.inSRTP.Store(nil)
		l.inSRTCP.Store(nil)
		l.out.setSRTP(nil)
		return nil
	}
	in, err := srtpContext(remote)
	if err != nil {
		return err
	}
	inRTCP, err := srtpContext(remote)
	if err != nil {
		return err
	}
	l.inSRTCP.Store(inRTCP)
	out, err := srtpContext(l.local)
	if err != nil {
		return err
	}
	l.inSRTP.Store(in)
	l.out.setSRTP(out)
	return nil
}

// readRTP reads the peer's RTP (and RTCP with rtcp-mux) into the Receiver, with one buffer for
// every packet.
func (l *leg) readRTP() {
	defer l.wg.Done()
	var (
		buf [media.SlotSize + 64]byte
		sc  scratch
	)
	for {
		n, from, err := l.rtp.ReadFromUDPAddrPort(buf[:])
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		l.receive(buf[:n], from, &sc)
	}
}

// scratch is what the reader decrypts into, reused for every packet.
type scratch struct {
	plain [media.SlotSize + 64]byte
	hdr   rtp.Header
	ext   [8]rtp.Extension
}

// receive handles one datagram of the RTP port: RTCP (with rtcp-mux) or SRTP/RTP.
func (l *leg) receive(pkt []byte, from netip.AddrPort, sc *scratch) {
	if len(pkt) >= 2 && pkt[1] >= 192 && pkt[1] <= 223 { // RTCP on the RTP port (rtcp-mux)
		l.handleRTCP(pkt, from)
		return
	}
	if ctx := l.inSRTP.Load(); ctx != nil {
		sc.hdr.Extensions, sc.hdr.CSRC = sc.ext[:0], sc.hdr.CSRC[:0]
		out, err := ctx.DecryptRTP(sc.plain[:0], pkt, &sc.hdr)
		if err != nil {
			l.in.failures.Add(1)
			return
		}
		pkt = out
	}
	l.arrived(pkt, from)
}

// arrived handles one RTP packet from the peer: latching, DTMF, statistics, the Receiver.
func (l *leg) arrived(pkt []byte, from netip.AddrPort) {
	h, ok := media.ParseRTP(pkt)
	recv := l.fromPlain
	if !ok || recv == nil {
		l.in.failures.Add(1)
		return
	}
	l.latch(from)
	now := sfu.Now()
	l.in.update(&h, len(pkt), now, l.plainCodec.ClockRate)
	if int32(h.PayloadType) == l.dtmfPT.Load() {
		// Reported, and relayed in the audio stream when the browser negotiated
		// telephone-event too (the DownTrack maps the payload type, as Janus relays them).
		l.dtmf.packet(h.Timestamp, h.Payload(pkt), l.dtmfRate, l.s.dtmfHandler())
	} else if h.PayloadType != uint8(l.plainCodec.PayloadType) {
		return // a format not negotiated (comfort noise and the like)
	}
	recv.WriteRTP(0, pkt, now)
}

// latch sends to where the peer's media comes from, once per negotiation (RFC 4961's symmetric
// RTP; a peer behind a NAT announces an address it cannot be reached at).
func (l *leg) latch(from netip.AddrPort) {
	if l.latched.Load() {
		return
	}
	l.latched.Store(true)
	l.latchTo(netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))
}

// latchTo is latch's once-per-negotiation part, apart so that the address escapes to the heap
// only here and not on every packet.
func (l *leg) latchTo(from netip.AddrPort) {
	if cur := l.remote.Load(); cur != nil && *cur == from {
		return
	}
	rtpAddr, rtcpAddr := from, netip.AddrPortFrom(from.Addr(), from.Port()+1)
	if l.rtcpMux.Load() {
		rtcpAddr = from
	}
	l.remote.Store(&rtpAddr)
	l.remoteRTCP.Store(&rtcpAddr)
	l.s.log.Debug("latched plain peer", "kind", l.kind.String(), "addr", from.String())
}

// readRTCPSocket reads the RTCP port.
func (l *leg) readRTCPSocket() {
	defer l.wg.Done()
	var buf [1500]byte
	for {
		n, from, err := l.rtcp.ReadFromUDPAddrPort(buf[:])
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		l.handleRTCP(buf[:n], from)
	}
}

// inStats is what strata measures about the peer's stream (RFC 3550 A.3, A.8).
type inStats struct {
	packets, bytes, failures atomic.Uint64
	lost                     atomic.Int64
	jitter                   atomic.Uint64 // in timestamp units × 16, as RFC 3550 keeps it
	ssrc                     atomic.Uint32

	// The reader's own state.
	started      bool
	base, cycles uint32
	maxSeq       uint16
	received     uint32
	lastTransit  int64
}

func (s *inStats) update(h *media.Header, size int, now time.Duration, clockRate uint32) {
	s.packets.Add(1)
	s.bytes.Add(uint64(size))
	if !s.started || h.SSRC != s.ssrc.Load() {
		s.started, s.base, s.cycles, s.maxSeq, s.received, s.lastTransit = true, uint32(h.Seq), 0, h.Seq, 0, 0
		s.ssrc.Store(h.SSRC)
	}
	if media.SeqNewer(h.Seq, s.maxSeq) {
		if h.Seq < s.maxSeq {
			s.cycles += 1 << 16
		}
		s.maxSeq = h.Seq
	}
	s.received++
	s.lost.Store(int64(s.cycles|uint32(s.maxSeq)) - int64(s.base) + 1 - int64(s.received))
	arrival := int64(now) * int64(clockRate) / int64(time.Second)
	transit := arrival - int64(h.Timestamp)
	if s.lastTransit != 0 {
		d := transit - s.lastTransit
		if d < 0 {
			d = -d
		}
		j := int64(s.jitter.Load())
		j += d - (j+8)>>4
		s.jitter.Store(uint64(max(j, 0)))
	}
	s.lastTransit = transit
}

func (s *inStats) flow(clockRate uint32) FlowStats {
	f := FlowStats{Packets: s.packets.Load(), Bytes: s.bytes.Load(), Lost: max(s.lost.Load(), 0)}
	if clockRate > 0 {
		f.Jitter = float64(s.jitter.Load()) / 16 * 1000 / float64(clockRate)
	}
	return f
}
