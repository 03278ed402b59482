// Package peer is the one place that turns strata's media configuration into Pion settings and wraps a
// PeerConnection with what the gateway needs: Janus-style events (webrtcup, media, slowlink, hangup),
// half-trickle answers, remote trickle candidates and the statistics shown by the admin API.
package peer

import (
	"github.com/pion/webrtc/v4"
)

// Hooks are the callbacks the gateway installs on a Peer. Any may be nil. They are called from Pion's
// goroutines and must not block.
type Hooks struct {
	// OnUp fires once, when ICE is connected and DTLS is done (Janus's `webrtcup`).
	OnUp func()
	// OnMedia reports that media of a kind started or stopped arriving on an m-line.
	OnMedia func(mid, kind string, receiving bool)
	// OnSlowLink reports sustained loss: uplink means media strata receives.
	OnSlowLink func(mid, kind string, uplink bool, lost int)
	// OnHangup fires once when the PeerConnection fails or closes, with a reason.
	OnHangup func(reason string)
	// OnCandidate is called for each local candidate when full trickle is on; nil c ends gathering.
	OnCandidate func(c *webrtc.ICECandidateInit)
}

// Peer is one WebRTC PeerConnection owned by a handle.
type Peer struct {
	// PC is the Pion PeerConnection; plugins add tracks and handlers to it.
	PC *webrtc.PeerConnection
}
