package echotest

import (
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/rtcpview"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// echoStream echoes one m-line on the media core: the incoming tracks of the m-line (one, or one
// per simulcast layer) feed one sfu.Receiver, and one sfu.DownTrack on the same PeerConnection
// sends them back. Layer selection, rewriting, keyframe requests and retransmissions are the
// core's; the stream only turns the request's fields into the down-track's target and its layer
// changes into Janus's events.
type echoStream struct {
	s       *session
	mid     string
	video   bool
	codec   media.Codec
	fmtp    string // the negotiated fmtp line, recorded with the stream
	recv    *sfu.Receiver
	down    *sfu.DownTrack
	sender  *webrtc.RTPSender
	layerOf map[string]int // simulcast rid → layer

	mu       sync.Mutex // guards reported
	reported policy.Layer
}

func newEchoStream(s *session, mid string, codec webrtc.RTPCodecCapability, recv *sfu.Receiver, layerOf map[string]int) *echoStream {
	st := &echoStream{
		s: s, mid: mid, video: recv.Codec().IsVideo(), codec: recv.Codec(), fmtp: codec.SDPFmtpLine, recv: recv, layerOf: layerOf,
		reported: policy.NoLayer,
	}
	st.down = sfu.NewDownTrack(recv, sfu.DownTrackConfig{
		ID: "strata-" + mid, StreamID: "strata-echotest", Codec: codec, RespondNACK: true,
		OnLayerChange: st.layerChanged,
	})
	return st
}

// simulcast reports whether the stream echoes one of several simulcast layers; otherwise its
// layers, if any, are SVC layers of one stream (VP9, AV1) or temporal layers.
func (st *echoStream) simulcast() bool { return st.recv.Config().Simulcast || !st.codec.SVC() }

// target is the layer the request's fields ask for: substream/temporal for simulcast,
// spatial_layer/temporal_layer for SVC.
func (st *echoStream) target(t layerTargets) policy.Layer {
	if st.simulcast() {
		return policy.Layer{Spatial: int8(t.substream), Temporal: int8(t.temporal)}
	}
	return policy.Layer{Spatial: int8(t.spatial), Temporal: int8(t.temporalSVC)}
}

// layerOfTrack is the receiver layer an incoming track feeds (0 without simulcast).
func (st *echoStream) layerOfTrack(rid string) int {
	if l, ok := st.layerOf[rid]; ok {
		return l
	}
	return 0
}

// topLayer is the highest simulcast layer the browser sends (0 without simulcast): the one a
// recording keeps, as Janus records the highest substream.
func (st *echoStream) topLayer() int {
	top := 0
	for _, l := range st.layerOf {
		top = max(top, l)
	}
	return top
}

// forward reads one incoming track into the receiver, with a buffer reused for every packet.
func (st *echoStream) forward(track *webrtc.TrackRemote, layer int) {
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil {
			return
		}
		st.recv.WriteRTP(layer, buf[:n], sfu.Now())
	}
}

// readRTCP hands what the browser says about the echo to the down-track (keyframe requests,
// NACKs, reports), and records its REMB as the peer's bitrate.
func (st *echoStream) readRTCP() {
	sfu.ReadSenderRTCP(st.sender, func(b []byte) {
		st.down.HandleRTCP(b, sfu.Now())
		it := rtcpview.Iterate(b)
		for p, ok := it.Next(); ok; p, ok = it.Next() {
			if r, err := rtcpview.ParseREMB(p); err == nil {
				st.s.peerBitrate.Store(uint32(min(r.Bitrate(), uint64(^uint32(0)))))
			}
		}
	})
}

// layerChanged tells the client the echoed layer changed, as Janus does: one event per changed
// dimension, "substream"/"temporal" for simulcast, "spatial_layer"/"temporal_layer" for SVC.
func (st *echoStream) layerChanged(cur policy.Layer) {
	if cur.Spatial < 0 {
		return
	}
	st.mu.Lock()
	prev := st.reported
	st.reported = cur
	st.mu.Unlock()
	spatial, temporal := "substream", "temporal"
	if !st.simulcast() {
		spatial, temporal = "spatial_layer", "temporal_layer"
	}
	if cur.Spatial != prev.Spatial {
		st.s.push("", map[string]any{short: "event", "videocodec": st.codec.String(), spatial: cur.Spatial}, nil)
	}
	if cur.Temporal != prev.Temporal {
		st.s.push("", map[string]any{short: "event", "videocodec": st.codec.String(), temporal: cur.Temporal}, nil)
	}
}

// echoing returns the event Janus sends when a request asks for the layer already echoed (then no
// keyframe is needed and the client hears at once); nil otherwise.
func (st *echoStream) echoing(t layerTargets, r *request) map[string]any {
	cur, want := st.down.Current(), st.target(t)
	ev := map[string]any{short: "event", "videocodec": st.codec.String()}
	switch {
	case st.simulcast() && r.Substream != nil && cur.Spatial == want.Spatial:
		ev["substream"] = cur.Spatial
	case st.simulcast() && r.Temporal != nil && cur.Temporal == want.Temporal:
		ev["temporal"] = cur.Temporal
	case !st.simulcast() && r.Spatial != nil && cur.Spatial == want.Spatial:
		ev["spatial_layer"] = cur.Spatial
	case !st.simulcast() && r.TemporalSVC != nil && cur.Temporal == want.Temporal:
		ev["temporal_layer"] = cur.Temporal
	default:
		return nil
	}
	return ev
}

// query adds the layer state to handle_info's plugin_specific.
func (st *echoStream) query(q map[string]any, t layerTargets) {
	cur := st.down.Current()
	switch {
	case st.recv.Config().Simulcast:
		q["simulcast"] = true
		q["substream"] = int(cur.Spatial)
		q["substream-target"] = t.substream
		q["temporal-layer"] = int(cur.Temporal)
		q["temporal-layer-target"] = t.temporal
	case st.codec.SVC():
		q["svc"] = true
		q["spatial-layer"] = int(cur.Spatial)
		q["spatial-layer-target"] = t.spatial
		q["temporal-layer"] = int(cur.Temporal)
		q["temporal-layer-target"] = t.temporalSVC
	}
}

// sourceSSRCs lists the SSRCs the browser sends this m-line on (the REMB cap names them).
func (st *echoStream) sourceSSRCs() []uint32 {
	var out []uint32
	for l := range policy.MaxSpatial {
		if ssrc := st.recv.LayerSSRC(l); ssrc != 0 {
			out = append(out, ssrc)
		}
	}
	return out
}

// close stops the echo of this m-line.
func (st *echoStream) close() {
	st.down.Stop()
	st.recv.Close()
}
