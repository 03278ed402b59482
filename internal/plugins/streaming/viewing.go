package streaming

import (
	"fmt"
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
	"github.com/strata-rtc/strata/internal/source"
)

// viewer is a session watching a mountpoint on one PeerConnection: a DownTrack per audio and
// video stream (a sink of the mountpoint's Receiver), a data channel per data stream, and an
// allocator that splits the viewer's own bandwidth estimate over its video streams.
type viewer struct {
	s *session

	mu      sync.Mutex
	mp      *mountpoint
	peer    *peer.Peer
	alloc   *sfu.Allocator
	streams []*viewStream
	own     source.Source // an ondemand viewer's own source
	// ownStarted: own plays (started once the viewer is started and up).
	ownStarted bool
	started    bool
	paused     bool
	up         bool
	closed     bool
	// stopping: a stop hangs the PeerConnection up (a second stop is ignored, as in Janus).
	stopping bool
	// clientOffer: the viewer started with its own offer (WHEP, answer.go).
	clientOffer bool

	// layerMu orders the layer events (the down-tracks report changes on goroutines of their own)
	// and guards each stream's reported layer.
	layerMu sync.Mutex

	// applyMu serialises applyPause: enable and disable call it from other handles' goroutines.
	applyMu sync.Mutex
}

// viewStream is one m-line (or data channel) of a viewer.
type viewStream struct {
	// st is the mountpoint stream it carries (guarded by the viewer's mu: switch changes it);
	// kind, simulcast and svc are the same for every stream it may carry.
	st         *mpStream
	kind       source.Kind
	simulcast  bool
	svc        bool
	mid        string
	down       *sfu.DownTrack
	tr         *webrtc.RTPTransceiver
	dc         *webrtc.DataChannel
	sink       *sfu.DataSink // dc's share of the data stream's fan-out
	cancelData func()
	send       bool
	max        policy.Layer
	// reported is the layer the viewer was last told of (NoLayer: none yet); guarded by the
	// viewer's layerMu.
	reported policy.Layer
	// attached: the down-track is a sink of its receiver (or waits for its keyframe replay);
	// guarded by the viewer's applyMu.
	attached bool
}

// attach starts the viewer's allocator over its PeerConnection's estimate.
func (v *viewer) attach(p *peer.Peer) *Error {
	var est sfu.Estimator
	var prober sfu.Prober
	if e := p.Estimator(); e != nil {
		est, prober = e, e
	}
	alloc, err := sfu.NewAllocator(v.s.p.alloc, est, prober, sfu.WithLogger(v.s.log), sfu.WithCensus(v.s.p.census),
		sfu.WithSlowLink(func(estimate cc.Bitrate) { go v.slowLink(estimate) }))
	if err != nil {
		return errorf(ErrUnknown, "Allocator: %v", err)
	}
	alloc.Start()
	v.mu.Lock()
	v.peer, v.alloc = p, alloc
	v.mu.Unlock()
	return nil
}

// initialMax is the cap watch asks for a stream (substream/temporal or spatial_layer/
// temporal_layer; none: the top layer).
func initialMax(st *mpStream, r *Watch) policy.Layer {
	max := policy.TopLayer
	switch {
	case st.simulcast:
		capLayer(&max, r.Substream, r.Temporal)
	case st.svc:
		capLayer(&max, r.SpatialLayer, r.TemporalLayer)
	}
	return max
}

// capLayer sets the spatial and temporal caps that are given (clamped to the layers there are).
func capLayer(l *policy.Layer, spatial, temporal *int) {
	if spatial != nil {
		l.Spatial = int8(min(*spatial, policy.MaxSpatial-1))
	}
	if temporal != nil {
		l.Temporal = int8(min(*temporal, policy.MaxTemporal-1))
	}
}

// addStream adds an m-line (or a data channel) for st with the mountpoint's mid.
func (v *viewer) addStream(st *mpStream, max policy.Layer) *Error {
	vs := &viewStream{st: st, kind: st.kind, simulcast: st.simulcast, svc: st.svc, mid: st.mid, send: true, max: max,
		reported: policy.NoLayer}
	if st.kind == source.Data {
		if err := v.addData(vs); err != nil {
			return err
		}
	} else if err := v.addMedia(vs); err != nil {
		return err
	}
	v.mu.Lock()
	v.streams = append(v.streams, vs)
	v.mu.Unlock()
	return nil
}

func (v *viewer) addMedia(vs *viewStream) *Error {
	st := vs.st
	vs.down = sfu.NewDownTrack(st.recv, sfu.DownTrackConfig{
		ID: fmt.Sprintf("%s%d-%s", st.kind, v.mp.id, st.mid), StreamID: fmt.Sprintf("janus%d", v.mp.id),
		Codec: capability(st), RespondNACK: v.s.p.respondNACK,
		OnLayerChange: func(sfu.Layer) { v.layerChanged(vs) },
	})
	tr, err := v.transceiver(vs.down, st.mid)
	if err != nil {
		return errorf(ErrUnknown, "Adding the %s stream %s: %v", st.kind, st.mid, err)
	}
	if err := restrictCodecs(tr, capability(st)); err != nil {
		return errorf(ErrUnknown, "Stream %s: %v", st.mid, err)
	}
	vs.tr = tr
	go vs.down.ReadRTCP(tr.Sender())
	if vs.kind == source.Video {
		v.alloc.AddTrack(vs.down, sfu.TrackOptions{Max: vs.max})
		v.alloc.SetPaused(vs.down, true) // until start
	}
	vs.down.SetPaused(true)
	return nil
}

// addData opens a data channel for a data stream; messages are relayed once the viewer starts.
func (v *viewer) addData(vs *viewStream) *Error {
	dc, err := v.peer.PC.CreateDataChannel(vs.st.label, nil)
	if err != nil {
		return errorf(ErrUnknown, "Data channel of stream %s: %v", vs.st.mid, err)
	}
	v.peer.TrackDataChannel(dc)
	vs.dc, vs.sink = dc, sfu.NewPionDataSink(dc, v.s.p.cfg.DataChannels)
	return nil
}

// start handles `start`: the client's answer (if any) is applied and forwarding begins.
func (v *viewer) start(tx string, jsep *plugin.JSEP) *Error {
	if jsep != nil {
		if jsep.Type != "answer" {
			return errorf(ErrUnknown, "Invalid response")
		}
		if err := v.peer.SetAnswer(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: jsep.SDP}); err != nil {
			return errorf(ErrUnknown, "Invalid response (%v)", err)
		}
	}
	v.mu.Lock()
	v.started, v.paused = true, false
	up := v.up
	v.mu.Unlock()
	v.applyPause()
	v.startOwn()
	status := "starting"
	if up {
		status = "started"
	}
	v.s.push(tx, result("status", status), nil)
	return nil
}

// pause stops (or resumes) forwarding every stream without renegotiation.
func (v *viewer) pause(paused bool) {
	v.mu.Lock()
	v.paused = paused
	v.mu.Unlock()
	v.applyPause()
}

// applyPause sets each stream's forwarding from the viewer's state: forwarding when started, the
// PeerConnection up, not paused, the stream's send on, and the mountpoint enabled. As in Janus
// (whose viewers start at setup_media), nothing is sent before the PeerConnection is up: Pion drops
// what is written before DTLS completes, and with it a replayed (bufferkf) or requested keyframe.
func (v *viewer) applyPause() {
	v.applyMu.Lock()
	defer v.applyMu.Unlock()
	v.mu.Lock()
	mp := v.mp
	run := v.started && v.up && !v.paused && !v.closed
	streams := append([]*viewStream(nil), v.streams...)
	alloc := v.alloc
	v.mu.Unlock()
	run = run && mp.isEnabled()
	for _, vs := range streams {
		on := run && vs.send
		if vs.dc != nil {
			v.setData(vs, on)
			continue
		}
		vs.down.SetPaused(!on)
		if alloc != nil && vs.kind == source.Video {
			alloc.SetPaused(vs.down, !on)
		}
		if on && !vs.attached {
			vs.attached = true
			v.attachDown(vs)
		}
	}
}

// attachDown starts a down-track's forwarding: with bufferkf from the source's newest keyframe
// (replayed from the packet cache, as Janus's videobufferkf), and with a keyframe request to the
// source either way.
func (v *viewer) attachDown(vs *viewStream) {
	v.mu.Lock()
	replay := vs.st.bufferKF
	v.mu.Unlock()
	if replay {
		vs.down.Receiver().AddSinkFromKeyframe(vs.down)
	} else {
		vs.down.Start()
	}
	requestKeyframes(vs)
}

// requestKeyframes asks the source for a keyframe on each layer of a video stream, so that a new
// viewer sees a picture quickly (PLI/FIR to a source with an RTCP port).
func requestKeyframes(vs *viewStream) {
	if vs.kind != source.Video {
		return
	}
	recv := vs.down.Receiver()
	layers := 1
	if vs.simulcast {
		layers = 3
	}
	for l := range layers {
		recv.RequestKeyframe(l, sfu.Now())
	}
}

// setData subscribes a data stream's channel to the mountpoint's messages, or unsubscribes it.
func (v *viewer) setData(vs *viewStream, on bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if on == (vs.cancelData != nil) || vs.st.data == nil || v.closed && on {
		return
	}
	if !on {
		vs.cancelData()
		vs.cancelData = nil
		return
	}
	recv, sink := vs.st.data.Receiver(), vs.sink
	recv.AddSink(sink)
	vs.cancelData = func() { recv.RemoveSink(sink) }
}

// beginStop marks the viewer stopping if a stop is to hang it up: Janus takes a stop only once the
// PeerConnection is up and not while a stop is under way.
func (v *viewer) beginStop() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.up || v.stopping {
		return false
	}
	v.stopping = true
	return true
}

// mediaUp: the PeerConnection is up; Janus says "started".
func (v *viewer) mediaUp() {
	v.mu.Lock()
	v.up = true
	v.mu.Unlock()
	v.applyPause()
	v.startOwn()
	v.s.push("", result("status", "started"), nil)
}

// startOwn starts an ondemand viewer's own source once the viewer is started and its
// PeerConnection up (Janus's ondemand playback waits for that too), so the file plays from its
// beginning rather than into a PeerConnection that drops it.
func (v *viewer) startOwn() {
	v.mu.Lock()
	own := v.own
	start := own != nil && v.started && v.up && !v.ownStarted && !v.closed
	v.ownStarted = v.ownStarted || start
	v.mu.Unlock()
	if st, ok := own.(interface{ Start() }); start && ok {
		st.Start()
	}
}

func (v *viewer) currentMountpoint() *mountpoint {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.mp
}

// slowLink tells the viewer its path does not carry what it asked for (as the videoroom does).
func (v *viewer) slowLink(estimate cc.Bitrate) {
	v.s.push("", map[string]any{Short: "event", "result": map[string]any{"status": "slow_link", "current-bitrate": int64(estimate)}}, nil)
}

// close ends the viewing: forwarding stops, the allocator and an ondemand source close.
func (v *viewer) close() {
	v.applyMu.Lock() // no applyPause starts a down-track this stops
	defer v.applyMu.Unlock()
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return
	}
	v.closed = true
	streams, alloc, own, mp := v.streams, v.alloc, v.own, v.mp
	v.mu.Unlock()
	for _, vs := range streams {
		if vs.down != nil {
			vs.down.Stop()
		}
		v.setData(vs, false)
	}
	if alloc != nil {
		alloc.Close()
	}
	if own != nil {
		_ = own.Close()
	}
	if mp != nil {
		mp.removeViewer(v.s)
	}
}

func (v *viewer) query() map[string]any {
	v.mu.Lock()
	q := map[string]any{"mountpoint": v.mp.id, "started": v.started, "paused": v.paused}
	streams := append([]*viewStream(nil), v.streams...)
	alloc, p := v.alloc, v.peer
	v.mu.Unlock()
	if alloc != nil {
		q["layer_policy"] = alloc.Policy()
	}
	if p != nil {
		if e := p.Estimator(); e != nil {
			q["estimate_bps"] = int64(e.Path().Estimate)
		}
	}
	var out []map[string]any
	for _, vs := range streams {
		m := map[string]any{"mid": vs.mid, "type": string(vs.kind), "send": vs.send}
		if vs.down != nil {
			st := vs.down.Stats()
			m["current"], m["target"], m["max"] = st.Current.String(), st.Target.String(), vs.max.String()
			m["packets"], m["bytes"], m["switches"], m["keyframe_requests"] = st.Packets, st.Bytes, st.Switches, st.KeyframeRequests
		}
		out = append(out, m)
	}
	q["streams"] = out
	return q
}
