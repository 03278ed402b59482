// Package peertest gives tests a Pion API that behaves like a browser on this machine's loopback:
// default codecs and interceptors (NACK, RTCP reports, TWCC feedback), transport-wide sequence
// numbers on what it sends, loopback host candidates only, no mDNS.
package peertest

import (
	"testing"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
)

// BrowserAPI returns the API; tb fails on set-up errors.
func BrowserAPI(tb testing.TB) *webrtc.API {
	tb.Helper()
	return BrowserAPIWith(tb, func(me *webrtc.MediaEngine) error { return me.RegisterDefaultCodecs() })
}

// BrowserAPIWith is BrowserAPI with the codecs that register puts in the media engine instead of
// Pion's defaults: a browser whose offer the page munged (multiopus in place of Opus, say).
func BrowserAPIWith(tb testing.TB, register func(*webrtc.MediaEngine) error) *webrtc.API {
	tb.Helper()
	return newAPI(tb, register, nil)
}

// newAPI builds the API, with first (if any) as the first interceptor.
func newAPI(tb testing.TB, register func(*webrtc.MediaEngine) error, first interceptor.Factory) *webrtc.API {
	tb.Helper()
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	me := &webrtc.MediaEngine{}
	if err := register(me); err != nil {
		tb.Fatal(err)
	}
	reg := &interceptor.Registry{}
	if first != nil {
		reg.Add(first)
	}
	if err := webrtc.RegisterDefaultInterceptors(me, reg); err != nil {
		tb.Fatal(err)
	}
	// Browsers put transport-wide sequence numbers on what they send; Pion's defaults do not.
	if err := webrtc.ConfigureTWCCHeaderExtensionSender(me, reg); err != nil {
		tb.Fatal(err)
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg))
}

// GatheredOffer makes pc's offer and returns it with every candidate in it (no trickle, as OBS
// and Janus's non-trickle clients send it).
func GatheredOffer(tb testing.TB, pc *webrtc.PeerConnection) string {
	tb.Helper()
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		tb.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		tb.Fatal(err)
	}
	<-gathered
	return pc.LocalDescription().SDP
}
