package peer

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"

	"github.com/pion/dtls/v3"
	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/udpbatch"
)

// settings is everything the configuration turns into, shared by all PeerConnections of a Factory:
// the SettingEngine (copied per peer, which then adds its own DTLS hook), the MediaEngine (Pion copies
// it per PeerConnection), the webrtc.Configuration and the sockets shared between peers.
type settings struct {
	engine      webrtc.SettingEngine
	media       *webrtc.MediaEngine
	bridgeMedia *webrtc.MediaEngine // media plus the bridge's audio formats (WithBridgeCodecs)
	rtcConfig   webrtc.Configuration
	udpMux      *ice.MultiUDPMuxDefault
	batcher     udpbatch.Batcher // groups fan-out writes on the mux's sockets (udpbatch.None without)
	marks       *udpbatch.Marks  // the DSCP marks of the mux's sockets (nil without batch_writes)
	tcpMux      *ice.TCPMuxDefault
	tcpListener net.Listener
}

// close releases the sockets shared between peers (the UDP and TCP muxes).
func (s *settings) close() error {
	var errs []error
	if s.udpMux != nil {
		errs = append(errs, s.udpMux.Close())
	}
	if s.tcpMux != nil {
		errs = append(errs, s.tcpMux.Close())
	}
	if s.tcpListener != nil {
		if err := s.tcpListener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// buildSettings is the one place that turns strata's media configuration into Pion settings.
func buildSettings(m config.Media, log *slog.Logger) (*settings, error) {
	s := &settings{batcher: udpbatch.None}
	s.engine.LoggerFactory = newLoggerFactory(log)
	s.rtcConfig = rtcConfiguration(m.ICE)
	if err := s.configureICE(m.ICE, log); err != nil {
		_ = s.close()
		return nil, err
	}
	if err := configureDTLS(&s.engine); err != nil {
		_ = s.close()
		return nil, err
	}
	media, err := newMediaEngine(m)
	if err != nil {
		_ = s.close()
		return nil, err
	}
	s.media = media
	if s.bridgeMedia, err = newBridgeMediaEngine(m); err != nil {
		_ = s.close()
		return nil, err
	}
	return s, nil
}

// rtcConfiguration carries the STUN and TURN servers. BUNDLE is forced (max-bundle) and RTCP is always
// multiplexed, as Janus requires of its peers.
func rtcConfiguration(c config.ICE) webrtc.Configuration {
	conf := webrtc.Configuration{
		BundlePolicy:  webrtc.BundlePolicyMaxBundle,
		RTCPMuxPolicy: webrtc.RTCPMuxPolicyRequire,
	}
	if len(c.STUNServers) > 0 {
		conf.ICEServers = append(conf.ICEServers, webrtc.ICEServer{URLs: slices.Clone(c.STUNServers)})
	}
	for _, t := range c.TURNServers {
		conf.ICEServers = append(conf.ICEServers, webrtc.ICEServer{
			URLs:           slices.Clone(t.URLs),
			Username:       t.Username,
			Credential:     t.Credential,
			CredentialType: webrtc.ICECredentialTypePassword,
		})
	}
	return conf
}

// configureICE applies ports (range or one UDP mux port), ICE-TCP, ICE-lite, loopback candidates,
// the interface filter and NAT 1:1 addresses.
func (s *settings) configureICE(c config.ICE, log *slog.Logger) error {
	e := &s.engine
	filter := interfaceFilter(c.Interfaces)
	if filter != nil {
		e.SetInterfaceFilter(filter)
	}
	e.SetIncludeLoopbackCandidate(c.Loopback)
	e.SetLite(c.Lite)
	// A server has no use for mDNS: browsers that hide their address behind a .local name still
	// reach us, and we learn them as peer-reflexive candidates from their connectivity checks.
	e.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	e.DisableActiveTCP(true)

	networks := []webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6}
	if c.TCPPort > 0 {
		if err := s.listenTCP(c, log); err != nil {
			return err
		}
		networks = append(networks, webrtc.NetworkTypeTCP4, webrtc.NetworkTypeTCP6)
	}
	e.SetNetworkTypes(networks)

	if c.UDPMuxPort > 0 {
		if err := s.listenUDPMux(c, filter, log); err != nil {
			return err
		}
	} else if c.PortMin != 0 || c.PortMax != 0 {
		if err := e.SetEphemeralUDPPortRange(c.PortMin, c.PortMax); err != nil {
			return fmt.Errorf("media.ice port range: %w", err)
		}
	}

	if len(c.NAT1To1IPs) > 0 {
		rule := webrtc.ICEAddressRewriteRule{
			External:        slices.Clone(c.NAT1To1IPs),
			AsCandidateType: webrtc.ICECandidateTypeHost,
			Mode:            webrtc.ICEAddressRewriteReplace,
		}
		if err := e.SetICEAddressRewriteRules(rule); err != nil {
			return fmt.Errorf("media.ice.nat_1to1_ips: %w", err)
		}
	}
	return nil
}

// listenUDPMux opens the single UDP port that all PeerConnections share (one socket per local
// address, demultiplexed by ICE username fragment).
func (s *settings) listenUDPMux(c config.ICE, filter func(string) bool, log *slog.Logger) error {
	opts := []ice.UDPMuxFromPortOption{
		ice.UDPMuxFromPortWithLogger(newLoggerFactory(log).NewLogger("udpmux")),
		ice.UDPMuxFromPortWithNetworks(ice.NetworkTypeUDP4, ice.NetworkTypeUDP6),
	}
	if filter != nil {
		opts = append(opts, ice.UDPMuxFromPortWithInterfaceFilter(filter))
	}
	// Link-local addresses are useless as candidates beyond one link, and binding an IPv6 one fails
	// while it is still tentative (duplicate address detection on a fresh interface).
	opts = append(opts, ice.UDPMuxFromPortWithIPFilter(func(ip net.IP) bool { return !ip.IsLinkLocalUnicast() }))
	if c.Loopback {
		opts = append(opts, ice.UDPMuxFromPortWithLoopback())
	}
	if c.BatchWrites {
		n, err := udpbatch.NewNet()
		if err != nil {
			return fmt.Errorf("media.ice.batch_writes: %w", err)
		}
		opts = append(opts, ice.UDPMuxFromPortWithNet(n))
		s.batcher, s.marks = n, n.Marks()
	}
	mux, err := ice.NewMultiUDPMuxFromPort(c.UDPMuxPort, opts...)
	if err != nil {
		return fmt.Errorf("media.ice.udp_mux_port %d: %w", c.UDPMuxPort, err)
	}
	s.udpMux = mux
	s.engine.SetICEUDPMux(mux)
	return nil
}

// listenTCP opens the passive ICE-TCP port (RFC 6544) shared by all PeerConnections.
func (s *settings) listenTCP(c config.ICE, log *slog.Logger) error {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{Port: c.TCPPort})
	if err != nil {
		return fmt.Errorf("media.ice.tcp_port %d: %w", c.TCPPort, err)
	}
	s.tcpListener = ln
	s.tcpMux = ice.NewTCPMuxDefault(ice.TCPMuxParams{
		Listener:        ln,
		Logger:          newLoggerFactory(log).NewLogger("tcpmux"),
		ReadBufferSize:  64,
		WriteBufferSize: 4 << 20,
	})
	s.engine.SetICETCPMux(s.tcpMux)
	return nil
}

// interfaceFilter keeps the named interfaces; nil (no filter) when the list is empty. A trailing '*'
// matches a prefix ("eth*").
func interfaceFilter(names []string) func(string) bool {
	if len(names) == 0 {
		return nil
	}
	list := slices.Clone(names)
	return func(iface string) bool {
		for _, n := range list {
			if prefix, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(iface, prefix) {
				return true
			}
			if n == iface {
				return true
			}
		}
		return false
	}
}

// configureDTLS makes strata the DTLS server when it answers (a=setup:passive). The browser, as DTLS
// client, then lists its SRTP profiles and we pick AEAD-AES-128-GCM first, which Chrome offers; as
// DTLS client (Janus's choice, a=setup:active) the browser's server-side preference would decide.
func configureDTLS(e *webrtc.SettingEngine) error {
	if err := e.SetAnsweringDTLSRole(webrtc.DTLSRoleServer); err != nil {
		return err
	}
	e.SetSRTPProtectionProfiles(
		dtls.SRTP_AEAD_AES_128_GCM,
		dtls.SRTP_AEAD_AES_256_GCM,
		dtls.SRTP_AES128_CM_HMAC_SHA1_80,
	)
	return nil
}
