package flows

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/pion/dtls/v3"
	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/report"
	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/logging"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/bwe"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// srtpProfile is the SRTP protection profile both ends use: AEAD-AES-128-GCM, Chrome's first
// choice (and strata's, internal/peer), whose 16-byte tag every media packet carries.
const (
	srtpProfile = dtls.SRTP_AEAD_AES_128_GCM
	srtpTagSize = 16
)

// mediaPayloadType is the video track's payload type. The payload is synthetic: nothing decodes
// it, so the codec name only makes the SDP ordinary.
const mediaPayloadType = 96

// peerPair is the two PeerConnections of a media flow, each with its ICE socket in its host's
// namespace.
type peerPair struct {
	offer, answer *webrtc.PeerConnection
	track         *webrtc.TrackLocalStaticRTP
	sender        *webrtc.RTPSender
	tracks        chan incoming // the receiver's track, once its first packet arrived
	muxes         []ice.UDPMux
}

// absSendTimeID is the abs-send-time extension id the sender negotiated (0: none).
func (p *peerPair) absSendTimeID() uint8 {
	for _, e := range p.sender.GetParameters().HeaderExtensions {
		if e.URI == sdp.ABSSendTimeURI {
			return uint8(e.ID)
		}
	}
	return 0
}

// newPeerPair connects Src (sending) to Dst (receiving), signalled in-process, and waits for the
// receiver's track.
func newPeerPair(ctx context.Context, m *Media, send *bwe.SendSide) (p *peerPair, err error) {
	p = &peerPair{}
	defer func() {
		if err != nil {
			_ = p.close()
		}
	}()
	p.offer, err = p.newPeer(m.env.Src, m.opts, func(reg *interceptor.Registry) {
		reg.Add(bwe.FactoryFunc(func(string) (interceptor.Interceptor, error) { return send, nil }))
	})
	if err != nil {
		return p, fmt.Errorf("sender's PeerConnection in %s: %w", m.env.Src.Name(), err)
	}
	p.answer, err = p.newPeer(m.env.Dst, m.opts, nil)
	if err != nil {
		return p, fmt.Errorf("receiver's PeerConnection in %s: %w", m.env.Dst.Name(), err)
	}
	p.track, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000},
		"video", m.spec.Name)
	if err != nil {
		return p, err
	}
	if p.sender, err = p.offer.AddTrack(p.track); err != nil {
		return p, err
	}
	p.tracks = make(chan incoming, 1)
	p.answer.OnTrack(func(t *webrtc.TrackRemote, r *webrtc.RTPReceiver) {
		select {
		case p.tracks <- newIncoming(t, r):
		default:
		}
	})
	connected := make(chan struct{})
	var once sync.Once
	p.offer.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateConnected {
			once.Do(func() { close(connected) })
		}
	})
	if err := signal(ctx, p.offer, p.answer); err != nil {
		return p, err
	}
	// Media written before DTLS completes would be dropped: wait for it.
	select {
	case <-connected:
		return p, nil
	case <-ctx.Done():
		return p, fmt.Errorf("ICE/DTLS between %v and %v did not connect: %w", m.env.Src.Addr(), m.env.Dst.Addr(), ctx.Err())
	}
}

// newPeer builds a PeerConnection whose only ICE candidate is a UDP socket on the host's address,
// opened inside the host's namespace. addInterceptors adds the sender's estimator.
func (p *peerPair) newPeer(h endpoint.Host, o mediaOptions, addInterceptors func(*interceptor.Registry)) (*webrtc.PeerConnection, error) {
	se, mux, err := hostSettings(h)
	if err != nil {
		return nil, err
	}
	p.muxes = append(p.muxes, mux)
	se.SetSRTPProtectionProfiles(srtpProfile)
	me, reg, err := mediaEngine(o, se.LoggerFactory)
	if err != nil {
		return nil, err
	}
	if addInterceptors != nil {
		addInterceptors(reg)
	}
	api := webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg))
	return api.NewPeerConnection(webrtc.Configuration{})
}

// hostSettings opens a UDP socket on the host's address inside its namespace and returns a
// quiet SettingEngine whose only ICE candidate is that socket, with its mux (the caller closes it
// after the PeerConnection).
func hostSettings(h endpoint.Host) (webrtc.SettingEngine, ice.UDPMux, error) {
	quiet := logging.NewDefaultLoggerFactory()
	quiet.DefaultLogLevel = logging.LogLevelDisabled
	var se webrtc.SettingEngine
	var conn net.PacketConn
	addr := h.Addr()
	if err := h.Do(func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
		return err
	}); err != nil {
		return se, nil, fmt.Errorf("ICE socket on %v: %w", addr, err)
	}
	mux := webrtc.NewICEUDPMux(quiet.NewLogger("ice"), conn)
	se.LoggerFactory = quiet
	se.SetICEUDPMux(mux)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetIPFilter(func(ip net.IP) bool { a, ok := netip.AddrFromSlice(ip); return ok && a.Unmap() == addr })
	return se, mux, nil
}

// mediaEngine registers the video codec, the header extensions and RTCP feedback the controller
// needs, and the interceptors that produce the feedback: sender and receiver reports (RTT, and the
// draft's loss) and, with transport-wide CC, the receiver's TWCC generator.
func mediaEngine(o mediaOptions, logs logging.LoggerFactory) (*webrtc.MediaEngine, *interceptor.Registry, error) {
	me := &webrtc.MediaEngine{}
	var fb []webrtc.RTCPFeedback
	if o.twcc {
		fb = append(fb, webrtc.RTCPFeedback{Type: webrtc.TypeRTCPFBTransportCC})
	}
	if o.absSend {
		fb = append(fb, webrtc.RTCPFeedback{Type: webrtc.TypeRTCPFBGoogREMB})
	}
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{
		MimeType: webrtc.MimeTypeVP8, ClockRate: 90000, RTCPFeedback: fb}, PayloadType: mediaPayloadType},
		webrtc.RTPCodecTypeVideo); err != nil {
		return nil, nil, err
	}
	reg := &interceptor.Registry{}
	if err := webrtc.ConfigureRTCPReportsWithOptions(reg, []report.ReceiverOption{report.WithReceiverLoggerFactory(logs)},
		report.WithSenderLoggerFactory(logs)); err != nil {
		return nil, nil, err
	}
	if o.absSend {
		if err := me.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: sdp.ABSSendTimeURI},
			webrtc.RTPCodecTypeVideo); err != nil {
			return nil, nil, err
		}
	}
	if o.twcc {
		if err := me.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: sdp.TransportCCURI},
			webrtc.RTPCodecTypeVideo); err != nil {
			return nil, nil, err
		}
		gen, err := twcc.NewSenderInterceptor(twcc.SendInterval(o.feedback), twcc.WithLoggerFactory(logs))
		if err != nil {
			return nil, nil, err
		}
		reg.Add(gen)
	}
	return me, reg, nil
}

// signal runs the offer/answer exchange in-process, without trickle: each side's description
// carries its one host candidate.
func signal(ctx context.Context, offerer, answerer *webrtc.PeerConnection) error {
	offer, err := offerer.CreateOffer(nil)
	if err != nil {
		return err
	}
	if err := setLocal(ctx, offerer, offer); err != nil {
		return fmt.Errorf("sender: %w", err)
	}
	if err := answerer.SetRemoteDescription(*offerer.LocalDescription()); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	answer, err := answerer.CreateAnswer(nil)
	if err != nil {
		return err
	}
	if err := setLocal(ctx, answerer, answer); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	return offerer.SetRemoteDescription(*answerer.LocalDescription())
}

func setLocal(ctx context.Context, pc *webrtc.PeerConnection, d webrtc.SessionDescription) error {
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(d); err != nil {
		return err
	}
	select {
	case <-gathered:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ICE gathering: %w", ctx.Err())
	}
}

// close closes both PeerConnections and their sockets.
func (p *peerPair) close() error {
	var errs []error
	for _, pc := range []*webrtc.PeerConnection{p.offer, p.answer} {
		if pc != nil {
			errs = append(errs, pc.Close())
		}
	}
	for _, m := range p.muxes {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}
