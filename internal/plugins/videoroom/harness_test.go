package videoroom_test

import (
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/transport/v4"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

var testLogger = janustest.Logger

// startServer runs a complete strata on loopback (free ports) and returns a WebSocket client.
func startServer(t testing.TB, edit func(*config.Config)) *janusclient.Client {
	t.Helper()
	return janustest.StartServer(t, edit, testLogger())
}

// startServerLogged is startServer with the server's logger.
var startServerLogged = janustest.StartServer

// attach creates a session and attaches a videoroom handle.
func attach(t testing.TB, c *janusclient.Client) *janusclient.Handle {
	t.Helper()
	return janustest.Attach(t, c, videoroom.Package)
}

var (
	request     = janustest.Request
	mustRequest = janustest.MustRequest
	wantCode    = janustest.WantCode
)

// clientAPI is a browser-like Pion API on loopback; with shaper set, everything the client
// receives goes through it.
func clientAPI(t testing.TB, shaper *linkShaper) *webrtc.API {
	t.Helper()
	return clientAPIWith(t, shaper, clientOptions{})
}

// clientOptions adjust clientAPIWith.
type clientOptions struct {
	// innermost interceptors come first in the chain: they see what the default interceptors
	// send, NACK retransmissions included.
	innermost []interceptor.Factory
	// noReplayProtection lets duplicated packets reach the application.
	noReplayProtection bool
	// net, without a shaper, is the client's network (e.g. sockets that report each packet's DSCP).
	net transport.Net
}

func clientAPIWith(t testing.TB, shaper *linkShaper, o clientOptions) *webrtc.API {
	t.Helper()
	var se webrtc.SettingEngine
	se.DisableSRTPReplayProtection(o.noReplayProtection)
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	if shaper != nil {
		n, err := shaper.net()
		if err != nil {
			t.Fatal(err)
		}
		se.SetNet(n)
	} else if o.net != nil {
		se.SetNet(o.net)
	}
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	reg := &interceptor.Registry{}
	for _, f := range o.innermost {
		reg.Add(f)
	}
	if err := webrtc.RegisterDefaultInterceptors(me, reg); err != nil {
		t.Fatal(err)
	}
	if err := webrtc.ConfigureTWCCHeaderExtensionSender(me, reg); err != nil {
		t.Fatal(err)
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg))
}

var completeLocal = janustest.CompleteLocal

func codeOf(err error) int { return janusclient.Code(err) }

// waitEvent waits up to 10 s for an unsolicited plugin event on h that satisfies ok.
func waitEvent(t testing.TB, h *janusclient.Handle, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	return janustest.WaitEvent(t, h, 10*time.Second, ok)
}
