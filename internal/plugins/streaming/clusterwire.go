package streaming

import (
	"encoding/json"
	"fmt"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/source"
)

// wireMountpoint is a mountpoint as its home node announces it to the others: what they list, and
// what a viewer on another node is offered (the streams the relay carries: audio and video).
type wireMountpoint struct {
	ID          uint64       `json:"id"`
	Kind        string       `json:"kind"` // rtp, rtsp or live
	Name        string       `json:"name,omitempty"`
	Description string       `json:"description,omitempty"`
	Metadata    string       `json:"metadata,omitempty"`
	PIN         string       `json:"pin,omitempty"`
	IsPrivate   bool         `json:"is_private,omitempty"`
	Enabled     bool         `json:"enabled"`
	Streams     []wireStream `json:"streams"`
}

// wireStream is one relayed stream of a mountpoint.
type wireStream struct {
	Mid       string `json:"mid"`
	Kind      string `json:"kind"` // audio or video
	Label     string `json:"label,omitempty"`
	MSID      string `json:"msid,omitempty"`
	Codec     string `json:"codec"`
	PT        int    `json:"pt,omitempty"`
	Fmtp      string `json:"fmtp,omitempty"`
	Simulcast bool   `json:"simulcast,omitempty"`
	SVC       bool   `json:"svc,omitempty"`
}

// Bounds on an announced mountpoint (remote input).
const (
	maxWireStreams = 16
	maxWireString  = 4096
)

// decodeWireMountpoint parses and checks another node's announcement of one of its mountpoints.
func decodeWireMountpoint(raw []byte) (wireMountpoint, error) {
	var w wireMountpoint
	if err := json.Unmarshal(raw, &w); err != nil {
		return wireMountpoint{}, fmt.Errorf("streaming mountpoint announcement: %w", err)
	}
	bad := func(format string, args ...any) (wireMountpoint, error) {
		return wireMountpoint{}, fmt.Errorf("streaming mountpoint announcement %d: %s", w.ID, fmt.Sprintf(format, args...))
	}
	if w.ID == 0 || w.ID >= 1<<53 {
		return bad("id out of range")
	}
	switch w.Kind {
	case "rtp", "rtsp", "live":
	default:
		return bad("kind %.32q", w.Kind)
	}
	for _, s := range []string{w.Name, w.Description, w.Metadata, w.PIN} {
		if len(s) > maxWireString {
			return bad("a string longer than %d bytes", maxWireString)
		}
	}
	if len(w.Streams) == 0 || len(w.Streams) > maxWireStreams {
		return bad("%d streams (1 to %d)", len(w.Streams), maxWireStreams)
	}
	mids := map[string]bool{}
	for i, s := range w.Streams {
		if s.Mid == "" || len(s.Mid) > 256 || mids[s.Mid] {
			return bad("stream %d: mid empty, too long or repeated", i)
		}
		mids[s.Mid] = true
		for _, x := range []string{s.Label, s.MSID, s.Fmtp} {
			if len(x) > maxWireString {
				return bad("stream %s: a string longer than %d bytes", s.Mid, maxWireString)
			}
		}
		c := media.CodecByName(s.Codec)
		switch {
		case s.Kind != string(source.Audio) && s.Kind != string(source.Video):
			return bad("stream %s: kind %.16q", s.Mid, s.Kind)
		case c == media.CodecUnknown || c.IsVideo() != (s.Kind == string(source.Video)):
			return bad("stream %s: codec %.16q for %s", s.Mid, s.Codec, s.Kind)
		case s.PT < 0 || s.PT > 127:
			return bad("stream %s: payload type %d", s.Mid, s.PT)
		case (s.Simulcast || s.SVC) && s.Kind != string(source.Video), s.Simulcast && s.SVC, s.SVC && !c.SVC():
			return bad("stream %s: simulcast or SVC where it cannot be", s.Mid)
		}
	}
	return w, nil
}

// wire describes a local mountpoint for the other nodes.
func (mp *mountpoint) wire() wireMountpoint {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	w := wireMountpoint{ID: mp.id, Kind: mp.kind, Name: mp.name, Description: mp.description, Metadata: mp.metadata,
		PIN: mp.pin, IsPrivate: mp.isPrivate, Enabled: mp.enabled}
	for _, st := range mp.relayedStreams() {
		w.Streams = append(w.Streams, wireStream{Mid: st.mid, Kind: string(st.kind), Label: st.label, MSID: st.msid,
			Codec: st.codecName, PT: st.pt, Fmtp: st.fmtp, Simulcast: st.simulcast, SVC: st.svc})
	}
	return w
}

// relayedStreams are the streams of a local mountpoint that cross to other nodes: audio and video
// (the relay carries RTP; data streams stay on the home node).
func (mp *mountpoint) relayedStreams() []*mpStream {
	var out []*mpStream
	for _, st := range mp.streams {
		if st.kind != source.Data && st.recv != nil {
			out = append(out, st)
		}
	}
	return out
}

// remoteMountpoint is this node's copy of another node's mountpoint: what it lists, and what its
// viewers here watch once its streams are imported (recv is set then).
func (p *Plugin) remoteMountpoint(home string, w wireMountpoint) *mountpoint {
	mp := &mountpoint{p: p, id: w.ID, kind: w.Kind, home: home, viewers: map[*session]struct{}{}}
	mp.setWire(w)
	for _, s := range w.Streams {
		c := media.CodecByName(s.Codec)
		label := s.Label
		if label == "" {
			label = s.Kind
		}
		mp.streams = append(mp.streams, &mpStream{kind: source.Kind(s.Kind), mid: s.Mid, label: label, msid: s.MSID,
			codec: c, codecName: c.String(), pt: s.PT, fmtp: s.Fmtp, simulcast: s.Simulcast, svc: s.SVC})
	}
	return mp
}

// setWire takes an announcement's changeable parts (edit, enable, disable).
func (mp *mountpoint) setWire(w wireMountpoint) {
	mp.mu.Lock()
	mp.wireDesc = w
	mp.name, mp.description, mp.metadata, mp.pin = w.Name, w.Description, w.Metadata, w.PIN
	mp.isPrivate, mp.enabled = w.IsPrivate, w.Enabled
	mp.mu.Unlock()
}

// sameMedia reports whether two announcements describe the same streams (a copy whose streams
// changed is replaced, its viewers told the mountpoint stopped).
func sameMedia(a, b wireMountpoint) bool {
	if a.Kind != b.Kind || len(a.Streams) != len(b.Streams) {
		return false
	}
	for i := range a.Streams {
		if a.Streams[i] != b.Streams[i] {
			return false
		}
	}
	return true
}
