package gateway

import (
	"encoding/json"
	"time"
)

// handleInfo is the admin API's handle_info, shaped like Janus's: identity, timing, plugin state,
// negotiation flags, and, when there is a PeerConnection, its SDPs and the peer's `webrtc` info.
// Times are Unix microseconds (Janus uses a monotonic clock; only differences are meaningful in
// both).
func (g *Gateway) handleInfo(h *handle) map[string]any {
	s := h.sess
	info := map[string]any{
		"session_id":            s.id,
		"session_last_activity": s.lastActivity().UnixMicro(),
		"session_timeout":       int(g.SessionTimeout().Seconds()),
		"session_transport":     s.transportName(),
		"handle_id":             h.id,
		"opaque_id":             h.opaqueID,
		"created":               h.created.UnixMicro(),
		"current_time":          time.Now().UnixMicro(),
		"plugin":                h.plug.Package(),
		"plugin_specific":       h.query(),
	}
	h.mu.Lock()
	info["flags"] = h.flags
	c := h.capture
	h.mu.Unlock()
	if c != nil { // as Janus's, with strata's counts
		info["dump-to-pcap"] = true
		info["pcap-file"] = c.Path()
		info["pcap-packets"] = c.Written()
		info["pcap-dropped"] = c.Dropped()
	}
	if p := h.currentPeer(); p != nil && p.PC != nil {
		sdps := map[string]string{"profile": "UDP/TLS/RTP/SAVPF"}
		if d := p.PC.LocalDescription(); d != nil {
			sdps["local"] = d.SDP
		}
		if d := p.PC.RemoteDescription(); d != nil {
			sdps["remote"] = d.SDP
		}
		info["sdps"] = sdps
		info["webrtc"] = p.Info()
	}
	return info
}

// query asks the plugin for its handle state, shielding the admin API from a failing plugin.
func (h *handle) query() any {
	var out any
	if err := guard(func() { out = h.ps.Query() }); err != nil {
		return map[string]string{"error": err.Error()}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return map[string]string{"error": "cannot encode: " + err.Error()}
	}
	return json.RawMessage(raw)
}
