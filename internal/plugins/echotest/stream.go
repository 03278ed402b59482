package echotest

import (
	"sync"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
)

// pliInterval rate-limits the keyframe requests strata sends for one stream.
const pliInterval = 300 * time.Millisecond

// echoStream echoes one m-line: all incoming tracks of that m-line (one, or one per simulcast layer)
// feed one outgoing track.
type echoStream struct {
	s       *session
	pc      *webrtc.PeerConnection
	mid     string
	video   bool
	codec   string // the Janus name, for events
	kind    media.Codec
	track   *webrtc.TrackLocalStaticRTP
	sender  *webrtc.RTPSender
	ridExts [2]uint8
	layerOf map[string]int

	mu         sync.Mutex // guards what follows; held while a packet is rewritten and written
	closed     bool
	simulcast  bool
	forwarding bool
	rw         media.Rewriter
	sim        simulcastSelector
	svc        svcSelector
	sources    [maxLayers]uint32 // incoming SSRC per layer
	lastPLI    time.Duration
	pliSent    bool
}

func newEchoStream(s *session, pc *webrtc.PeerConnection, mid string, video bool, codec webrtc.RTPCodecParameters,
	track *webrtc.TrackLocalStaticRTP, sender *webrtc.RTPSender, line offeredLine, layerOf map[string]int,
) *echoStream {
	st := &echoStream{
		s: s, pc: pc, mid: mid, video: video, codec: codecName(codec.MimeType), kind: media.CodecByName(codec.MimeType),
		track: track, sender: sender, ridExts: [2]uint8{line.ridExt, line.repairedRidExt}, layerOf: layerOf,
		sim: newSimulcastSelector(), svc: newSVCSelector(),
	}
	st.rw.Init(codec.ClockRate, 0) // the Pion track writes the echo's SSRC
	return st
}

func (st *echoStream) close() {
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
}

// addSource registers an incoming track and returns its layer (0 without simulcast).
func (st *echoStream) addSource(rid string, ssrc uint32) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	layer := 0
	if rid != "" {
		st.simulcast = true
		if l, ok := st.layerOf[rid]; ok {
			layer = l
		}
	}
	st.sources[layer] = ssrc
	return layer
}

// forward reads one incoming track into a buffer reused for every packet and echoes it.
func (st *echoStream) forward(track *webrtc.TrackRemote, layer int) {
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil {
			return
		}
		st.handle(buf[:n], layer, time.Since(st.s.epoch))
	}
}

// handle decides, rewrites in place and writes one packet. It allocates nothing in steady state.
func (st *echoStream) handle(pkt []byte, layer int, now time.Duration) {
	active := st.s.audioActive.Load()
	if st.video {
		active = st.s.videoActive.Load()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	if st.prepareLocked(pkt, layer, active, now) {
		_, _ = st.track.Write(pkt) // under the lock, so echoed packets leave in the order they were numbered
	}
}

// prepareLocked decides whether pkt is echoed and, if so, rewrites it in place into the echo stream.
func (st *echoStream) prepareLocked(pkt []byte, layer int, active bool, now time.Duration) bool {
	h, ok := media.ParseRTP(pkt)
	if !ok {
		return false
	}
	if !active {
		if st.forwarding {
			st.forwarding = false
			st.rw.Switch() // the resumed echo continues where it stopped
		}
		return false
	}
	st.forwarding = true
	f := media.NoLayers()
	if st.video {
		if parsed, ok := media.ParsePayload(st.kind, h.Payload(pkt)); ok {
			f = parsed
		}
		if !st.selectLocked(pkt, &h, layer, &f, now) {
			return false
		}
	}
	if _, ok := st.rw.Rewrite(pkt, &h, &f, now); !ok {
		return false // a late packet from before a switch: it has no place in the echo
	}
	h.BlankExtension(pkt, st.ridExts[0])
	h.BlankExtension(pkt, st.ridExts[1])
	return true
}

// selectLocked applies the simulcast or SVC selection; false means drop the packet. Dropped packets
// of the echoed stream leave no sequence hole; their picture ids do leave one (the rewriter is told
// only part of the picture went), because VP9 references are picture id differences that renumbering
// would break, and receivers take a missing picture of an upper temporal layer for what it is.
func (st *echoStream) selectLocked(pkt []byte, h *media.Header, layer int, f *media.Flags, now time.Duration) bool {
	var sel selection
	switch {
	case st.simulcast:
		sel = st.sim.accept(layer, f, now)
		if sel.wantKeyframe {
			st.requestKeyframeLocked(st.sources[st.sim.effective(now)], now)
		}
		if !sel.forward {
			if layer == st.sim.current {
				st.rw.Drop(h, f, h.Payload(pkt), false)
			}
			return false
		}
		if sel.switched {
			st.rw.Switch()
		}
		if sel.switched || sel.temporalChanged {
			st.notify(map[string]any{short: "event", "videocodec": st.codec, "substream": st.sim.current, "temporal": st.sim.temporal})
		}
	case st.kind == media.CodecVP9:
		sel = st.svc.accept(f)
		if sel.wantKeyframe {
			st.requestKeyframeLocked(st.sources[0], now)
		}
		if !sel.forward {
			st.rw.Drop(h, f, h.Payload(pkt), false)
			return false
		}
		if sel.setMarker {
			media.SetMarker(pkt, true)
		}
		if sel.switched || sel.temporalChanged {
			st.notify(map[string]any{short: "event", "videocodec": st.codec, "spatial_layer": st.svc.spatial, "temporal_layer": st.svc.temporal})
		}
	}
	return true
}

// notify pushes a layer event without holding up the media path (rare: only on a switch).
func (st *echoStream) notify(ev map[string]any) {
	go st.s.push("", ev, nil)
}

func (st *echoStream) requestKeyframeLocked(ssrc uint32, now time.Duration) {
	if ssrc == 0 || (st.pliSent && now-st.lastPLI < pliInterval) {
		return
	}
	st.pliSent, st.lastPLI = true, now
	st.writeRTCP(&rtcp.PictureLossIndication{SenderSSRC: st.localSSRC(), MediaSSRC: ssrc})
}

// readRTCP reads what the browser sends about the echo: keyframe requests go to the incoming stream
// being echoed (as a PLI), REMB is recorded as the peer's bitrate.
func (st *echoStream) readRTCP() {
	for {
		pkts, _, err := st.sender.ReadRTCP()
		if err != nil {
			return
		}
		for _, p := range pkts {
			switch r := p.(type) {
			case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
				st.keyframeRequested()
			case *rtcp.ReceiverEstimatedMaximumBitrate:
				st.s.peerBitrate.Store(uint32(r.Bitrate))
			}
		}
	}
}

func (st *echoStream) keyframeRequested() {
	if !st.video {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	layer := 0
	if st.simulcast && st.sim.current >= 0 {
		layer = st.sim.current
	}
	st.requestKeyframeLocked(st.sources[layer], time.Since(st.s.epoch))
}

func (st *echoStream) writeRTCP(p rtcp.Packet) {
	if err := st.pc.WriteRTCP([]rtcp.Packet{p}); err != nil {
		st.s.log.Debug("writing RTCP", "err", err)
	}
}

// localSSRC is the SSRC of the echo track.
func (st *echoStream) localSSRC() uint32 {
	if enc := st.sender.GetParameters().Encodings; len(enc) > 0 {
		return uint32(enc[0].SSRC)
	}
	return 0
}

// sourceSSRCs lists the incoming SSRCs seen so far.
func (st *echoStream) sourceSSRCs() []uint32 {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []uint32
	for _, s := range st.sources {
		if s != 0 {
			out = append(out, s)
		}
	}
	return out
}

// setTargets moves the layer targets. When r asks for a layer that is already echoed it returns the
// event Janus sends in that case, and same=true.
func (st *echoStream) setTargets(t layerTargets, r *request) (map[string]any, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sim.target, st.sim.temporalTarget = t.substream, t.temporal
	st.svc.spatialTarget, st.svc.temporalTarget = t.spatial, t.temporalSVC
	if r == nil {
		return nil, false
	}
	ev := map[string]any{short: "event", "videocodec": st.codec}
	switch {
	case st.simulcast && r.Substream != nil && st.sim.current == t.substream:
		ev["substream"] = st.sim.current
	case st.simulcast && r.Temporal != nil && st.sim.temporal == t.temporal:
		ev["temporal"] = st.sim.temporal
	case st.kind == media.CodecVP9 && r.Spatial != nil && st.svc.spatial == t.spatial:
		ev["spatial_layer"] = st.svc.spatial
	case st.kind == media.CodecVP9 && r.TemporalSVC != nil && st.svc.temporal == t.temporalSVC:
		ev["temporal_layer"] = st.svc.temporal
	default:
		return nil, false
	}
	return ev, true
}

// query adds the layer state to handle_info's plugin_specific.
func (st *echoStream) query(q map[string]any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.simulcast {
		q["simulcast"] = true
		q["substream"] = st.sim.current
		q["substream-target"] = st.sim.target
		q["temporal-layer"] = st.sim.temporal
		q["temporal-layer-target"] = st.sim.temporalTarget
	}
	if st.kind == media.CodecVP9 {
		q["svc"] = true
		q["spatial-layer"] = st.svc.spatial
		q["spatial-layer-target"] = st.svc.spatialTarget
		q["temporal-layer"] = st.svc.temporal
		q["temporal-layer-target"] = st.svc.temporalTarget
	}
}
