package streaming

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
	"github.com/strata-rtc/strata/internal/source/rtpin"
)

// mountpoint is one mountpoint: its description, its source (shared by every viewer of a live
// mountpoint; an ondemand one opens a source per viewer) and its viewers.
type mountpoint struct {
	p      *Plugin
	id     uint64
	kind   string // rtp, live, ondemand, rtsp
	legacy bool   // created with Janus's deprecated audio/video/data form
	host   string
	// filename is a live or ondemand mountpoint's file, rtsp an rtsp one's server (info shows them
	// to the admin).
	filename string
	rtsp     *RTSPSource

	// madeAt is when the mountpoint was made (sfu.Now's clock): the age of a stream that has not
	// received anything yet, as Janus counts it.
	madeAt time.Duration

	// home is the node of another node's mountpoint (cluster.go; "": this node's). announced: this
	// node's mountpoint is announced to the other nodes.
	home      string
	announced bool

	src       source.Source                 // nil for ondemand
	perViewer func() (source.Source, error) // ondemand: a source for one viewer
	streams   []*mpStream

	mu          sync.Mutex
	name        string
	description string
	metadata    string
	secret, pin string
	isPrivate   bool
	enabled     bool
	viewers     map[*session]struct{}
	closed      bool

	// A remote mountpoint's announcement as last received, and its import from its home
	// (cluster.go): impMu serialises imports; holds counts the viewers being set up on it.
	wireDesc wireMountpoint
	impMu    sync.Mutex
	imp      *relay.Import
	holds    int
}

// mpStream is one stream of a mountpoint.
type mpStream struct {
	kind      source.Kind
	mid       string
	label     string
	msid      string
	codec     media.Codec
	codecName string
	pt        int
	fmtp      string
	simulcast bool
	svc       bool
	skew      bool
	bufferKF  bool
	ports     rtpin.Ports
	hasPorts  bool
	hasRTCP   bool
	// recv and data carry a live mountpoint's media (nil for ondemand: each viewer's own source).
	recv *sfu.Receiver
	data *rtpin.DataTrack

	recMu    sync.Mutex
	recorder *record.Participant
	recFile  string
}

// live reports whether viewers share one source (Janus's "live" type: rtp, rtsp and live files).
func (mp *mountpoint) live() bool { return mp.kind != "ondemand" }

// rtpLive reports whether the mountpoint takes RTP from outside (what switch and recording need).
func (mp *mountpoint) rtpLive() bool { return mp.kind == "rtp" || mp.kind == "rtsp" }

func (mp *mountpoint) stream(mid string) *mpStream {
	for _, st := range mp.streams {
		if st.mid == mid {
			return st
		}
	}
	return nil
}

// addViewer records a viewer; false when the mountpoint is gone.
func (mp *mountpoint) addViewer(s *session) bool {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	if mp.closed {
		return false
	}
	mp.viewers[s] = struct{}{}
	return true
}

func (mp *mountpoint) removeViewer(s *session) {
	mp.mu.Lock()
	delete(mp.viewers, s)
	idle := mp.idleLocked()
	mp.mu.Unlock()
	if idle {
		mp.p.cl.retire(mp) // its last viewer here left: the import stops
	}
}

func (mp *mountpoint) viewerList() []*session {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	out := make([]*session, 0, len(mp.viewers))
	for s := range mp.viewers {
		out = append(out, s)
	}
	return out
}

func (mp *mountpoint) isEnabled() bool {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	return mp.enabled
}

// close ends the mountpoint: its viewers are told "stopped" and hung up, recordings end, the
// source closes.
func (mp *mountpoint) close() {
	mp.mu.Lock()
	if mp.closed {
		mp.mu.Unlock()
		return
	}
	mp.closed = true
	viewers := mp.viewers
	mp.viewers = map[*session]struct{}{}
	mp.mu.Unlock()
	for s := range viewers {
		s.endViewing(mp, "stopped")
	}
	for _, st := range mp.streams {
		st.stopRecording()
	}
	if mp.src != nil {
		_ = mp.src.Close()
	}
	mp.releaseImport()
}

// typeName is Janus's "type" of a mountpoint in list, info and create: "live" or "on demand".
func (mp *mountpoint) typeName() string {
	if mp.live() {
		return "live"
	}
	return "on demand"
}

// listEntry is a mountpoint as list shows it.
func (mp *mountpoint) listEntry() map[string]any {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	e := map[string]any{"id": mp.id, "type": mp.typeName(), "description": mp.description, "enabled": mp.enabled}
	if mp.metadata != "" {
		e["metadata"] = mp.metadata
	}
	if mp.kind == "rtp" || mp.kind == "rtsp" {
		media := []map[string]any{}
		now := sfu.Now()
		for _, st := range mp.streams {
			m := map[string]any{"mid": st.mid, "type": string(st.kind), "label": st.label}
			if st.msid != "" {
				m["msid"] = st.msid
			}
			if age, ok := mp.age(st, now); ok {
				m["age_ms"] = age
			}
			media = append(media, m)
		}
		e["media"] = media
	}
	return e
}

// age is how long ago an RTP stream last received something, in ms; since the mountpoint was
// made when it has received nothing yet (Janus starts its last-received time at creation).
func (mp *mountpoint) age(st *mpStream, now time.Duration) (int64, bool) {
	stats, ok := mp.rtpStats(st.mid)
	if !ok {
		return 0, false
	}
	last := mp.madeAt
	if stats.LastReceived != 0 {
		last = time.Duration(stats.LastReceived)
	}
	return (now - last).Milliseconds(), true
}

func (mp *mountpoint) rtpStats(mid string) (rtpin.Stats, bool) {
	if src, ok := mp.src.(*rtpin.Source); ok {
		return src.Stats(mid)
	}
	return rtpin.Stats{}, false
}

// info is a mountpoint as info shows it; admin (the secret given, or none set) adds the details.
func (mp *mountpoint) info(admin bool) map[string]any {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	ml := map[string]any{"id": mp.id, "enabled": mp.enabled, "type": mp.typeName()}
	if admin && mp.name != "" {
		ml["name"] = mp.name
	}
	if mp.description != "" {
		ml["description"] = mp.description
	}
	if mp.metadata != "" {
		ml["metadata"] = mp.metadata
	}
	if admin && mp.secret != "" {
		ml["secret"] = mp.secret
	}
	if admin && mp.pin != "" {
		ml["pin"] = mp.pin
	}
	if admin && mp.isPrivate {
		ml["is_private"] = true
	}
	if admin {
		ml["viewers"] = len(mp.viewers)
		ids := make([]uint64, 0, len(mp.viewers))
		for s := range mp.viewers {
			ids = append(ids, s.h.ID())
		}
		ml["viewer_handles"] = ids // strata's: the handles kick takes
	}
	if mp.kind == "rtsp" {
		ml["rtsp"] = true
		if admin {
			for k, v := range map[string]*string{"url": mp.rtsp.URL, "rtsp_user": mp.rtsp.User, "rtsp_pwd": mp.rtsp.Password} {
				if v != nil {
					ml[k] = *v
				}
			}
		}
	}
	if admin && mp.filename != "" {
		ml["filename"] = mp.filename
	}
	streams := []map[string]any{}
	now := sfu.Now()
	for i, st := range mp.streams {
		m := map[string]any{"mindex": i, "type": string(st.kind), "mid": st.mid, "label": st.label}
		if st.msid != "" {
			m["msid"] = st.msid
		}
		if st.pt > 0 {
			m["pt"] = st.pt
		}
		if st.codec != media.CodecUnknown {
			m["codec"] = st.codecName
			m["rtpmap"] = rtpmap(st.codec)
		}
		if st.fmtp != "" {
			m["fmtp"] = st.fmtp
		}
		if st.bufferKF {
			m["videobufferkf"] = true
		}
		if st.simulcast {
			m["videosimulcast"] = true
		}
		if st.svc {
			m["videosvc"] = true
		}
		if st.skew {
			m["skew_compensation"] = true
		}
		if admin && st.hasPorts {
			if mp.host != "" {
				ml["host"] = mp.host
			}
			m["port"] = st.ports.Port
			if st.hasRTCP {
				m["rtcpport"] = st.ports.RTCP
			}
			if st.simulcast {
				m["port2"], m["port3"] = st.ports.Port2, st.ports.Port3
			}
		}
		if age, ok := mp.age(st, now); ok {
			m["age_ms"] = age
		}
		if admin && st.recv != nil {
			// strata's: what the source sent, and what was dropped as malformed.
			rs := st.recv.Stats()
			m["packets_received"], m["malformed_packets"] = rs.Packets, rs.MalformedRTP+rs.MalformedPayload
		}
		if f := st.recording(); admin && f != "" {
			m["recording"] = f
		}
		streams = append(streams, m)
	}
	ml["media"] = streams
	return ml
}

// rtpmap is Janus's janus_sdp_get_codec_rtpmap.
func rtpmap(c media.Codec) string {
	switch c {
	case media.CodecOpus:
		return "opus/48000/2"
	case media.CodecMultiopus:
		return "multiopus/48000/6"
	case media.CodecPCMU:
		return "PCMU/8000"
	case media.CodecPCMA:
		return "PCMA/8000"
	case media.CodecG722:
		return "G722/8000"
	case media.CodecVP8:
		return "VP8/90000"
	case media.CodecVP9:
		return "VP9/90000"
	case media.CodecH264:
		return "H264/90000"
	case media.CodecAV1:
		return "AV1/90000"
	case media.CodecH265:
		return "H265/90000"
	}
	return ""
}

// created is create's "stream" object (Janus's new format, or the legacy one's per-kind ports).
func (mp *mountpoint) created() map[string]any {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	ml := map[string]any{"id": mp.id, "type": mp.typeName(), "description": mp.description, "is_private": mp.isPrivate}
	if mp.kind != "rtp" {
		return ml
	}
	if mp.host != "" {
		ml["host"] = mp.host
	}
	if mp.legacy {
		for _, st := range mp.streams {
			k := string(st.kind)
			if mp.host != "" {
				ml[k+"_host"] = mp.host
			}
			ml[k+"_port"] = st.ports.Port
			if st.hasRTCP {
				ml[k+"_rtcp_port"] = st.ports.RTCP
			}
			if st.simulcast {
				ml[k+"_port_2"], ml[k+"_port_3"] = st.ports.Port2, st.ports.Port3
			}
		}
		return ml
	}
	media := []map[string]any{}
	for _, st := range mp.streams {
		m := map[string]any{"type": string(st.kind), "mid": st.mid, "port": st.ports.Port}
		if st.msid != "" {
			m["msid"] = st.msid
		}
		if st.hasRTCP {
			m["rtcp_port"] = st.ports.RTCP
		}
		if st.simulcast {
			m["port_2"], m["port_3"] = st.ports.Port2, st.ports.Port3
		}
		media = append(media, m)
	}
	ml["ports"] = media // Janus 1.1.2 calls create's list "ports" (info's is "media")
	return ml
}
