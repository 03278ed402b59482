package gateway

import (
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/events"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// hooks wires one PeerConnection's callbacks to Janus's events (webrtcup, media, slowlink, hangup,
// trickle) and to the plugin (MediaReady, MediaClosed). Callbacks from a PeerConnection that is no
// longer the handle's current one are ignored. They never block: events go to the session's sink,
// plugin calls to the handle's worker.
func (h *handle) hooks(slot *peerSlot) peer.Hooks {
	hk := peer.Hooks{
		OnUp: func() {
			if !h.isCurrent(slot, func(f *handleFlags) { f.Ready = true }) {
				return
			}
			h.sess.deliver(h.event("webrtcup"))
			h.emitWebRTC(events.SubtypeWebRTCState, map[string]any{"connection": "webrtcup"})
			h.pluginCall(func(s plugin.Session) { s.MediaReady() })
		},
		OnMedia: func(mid, kind string, receiving bool) {
			if !h.isCurrent(slot, nil) {
				return
			}
			h.sess.deliver(h.event("media").With("mid", mid).With("type", kind).With("receiving", receiving))
			h.emitMedia(events.SubtypeMediaState, map[string]any{"mid": mid, "media": kind, "receiving": receiving})
		},
		OnSlowLink: func(mid, kind string, uplink bool, lost int) {
			if !h.isCurrent(slot, nil) {
				return
			}
			h.sess.deliver(h.event("slowlink").With("mid", mid).With("media", kind).
				With("uplink", uplink).With("lost", lost))
			link := "downlink"
			if uplink {
				link = "uplink"
			}
			h.emitMedia(events.SubtypeMediaSlowLink, map[string]any{"mid": mid, "media": kind, "slow_link": link, "lost_lastsec": lost})
		},
		OnHangup: func(reason string) {
			if !h.releaseSlot(slot) {
				return
			}
			h.sess.deliver(h.event("hangup").With("reason", reason))
			h.emitWebRTC(events.SubtypeWebRTCState, map[string]any{"connection": "hangup", "reason": reason})
			h.pluginCall(func(s plugin.Session) { s.MediaClosed(reason) })
		},
	}
	if h.gw.events != nil {
		// Janus numbers its streams and components; strata bundles everything on one of each.
		state := func(subtype int, key string) func(string) {
			return func(v string) {
				if h.isCurrent(slot, nil) {
					h.emitWebRTC(subtype, map[string]any{key: v, "stream_id": 1, "component_id": 1})
				}
			}
		}
		hk.OnICEState = state(events.SubtypeWebRTCICE, "ice")
		hk.OnDTLSState = state(events.SubtypeWebRTCDTLS, "dtls")
		hk.OnSelectedPair = state(events.SubtypeWebRTCPair, "selected-pair")
	}
	if h.gw.cfg.Media.ICE.FullTrickle {
		hk.OnCandidate = func(c *webrtc.ICECandidateInit) {
			if !h.isCurrent(slot, nil) {
				return
			}
			var cand any = map[string]bool{"completed": true}
			if c != nil {
				cand = c
			}
			h.sess.deliver(h.event("trickle").With("candidate", cand))
		}
	}
	return hk
}

// event is a handle-level event envelope without a transaction.
func (h *handle) event(kind string) janus.Message {
	return janus.Message{Janus: kind, SessionID: h.sess.id, Sender: h.id}
}

// isCurrent reports whether slot is still the handle's PeerConnection and the handle is alive;
// update (if any) changes the flags under the same lock.
func (h *handle) isCurrent(slot *peerSlot, update func(*handleFlags)) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished || h.slot != slot {
		return false
	}
	if update != nil {
		update(&h.flags)
	}
	return true
}

// releaseSlot forgets the PeerConnection after it hung up, so that the next offer gets a fresh one.
// It reports false if slot was no longer current.
func (h *handle) releaseSlot(slot *peerSlot) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished || h.slot != slot {
		return false
	}
	h.slot = nil
	h.awaitingAnswer = false
	h.flags = handleFlags{Stopped: true}
	return true
}
