package streaming

import (
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// configure handles `configure`: per stream (mid; none: every stream) send on or off, and the cap
// on the layers the viewer's allocator may give a simulcast (substream, temporal) or SVC
// (spatial_layer, temporal_layer) stream. Janus sets those layers for the viewer; strata caps its
// allocation with them, so a viewer whose path carries less still gets less. fallback and the
// playout-delay bounds are accepted and have no effect (docs/STREAMING.md).
func (v *viewer) configure(tx string, r *Configure) *Error {
	v.mu.Lock()
	streams := append([]*viewStream(nil), v.streams...)
	alloc := v.alloc
	v.mu.Unlock()
	for _, vs := range streams {
		if r.MID != nil && *r.MID != vs.mid {
			continue
		}
		if r.Send != nil {
			v.mu.Lock()
			vs.send = *r.Send
			v.mu.Unlock()
		}
		if vs.down == nil || vs.kind != source.Video {
			continue
		}
		v.mu.Lock()
		max := vs.max
		v.mu.Unlock()
		switch {
		case vs.simulcast:
			capLayer(&max, r.Substream, r.Temporal)
		case vs.svc:
			capLayer(&max, r.SpatialLayer, r.TemporalLayer)
		default:
			continue
		}
		v.layerAlready(vs, r)
		if max != vs.max {
			v.mu.Lock()
			vs.max = max
			v.mu.Unlock()
			alloc.SetOptions(vs.down, sfu.TrackOptions{Max: max})
		}
	}
	v.applyPause()
	v.s.push(tx, result("event", "configured"), nil)
	return nil
}

// switchTo handles `switch`: the viewer's streams are retargeted to another live RTP mountpoint's
// receivers without renegotiation: each stream takes the target's stream with the same mid, or
// else the one at the same position, when it has the same kind and codec; its down-track goes on
// at the new source's next keyframe with continuous numbering.
func (v *viewer) switchTo(tx string, r *Switch) *Error {
	target := v.s.p.mountpoint(r.ID)
	if target == nil {
		return NoSuchMountpoint(r.ID)
	}
	if !target.rtpLive() {
		return errorf(ErrCantSwitch, "Can't switch: target is not a live RTP mountpoint")
	}
	if err := v.s.p.cl.hold(v.s.q.Context(), target); err != nil {
		return err
	}
	defer target.unhold()
	v.mu.Lock()
	old := v.mp
	streams := append([]*viewStream(nil), v.streams...)
	v.mu.Unlock()
	if old == target {
		v.s.push(tx, map[string]any{Short: "event", "result": map[string]any{"switched": "ok", "id": r.ID}}, nil)
		return nil
	}
	if !target.addViewer(v.s) {
		return NoSuchMountpoint(r.ID)
	}
	// The old mountpoint loses the viewer once its streams left the old receivers: another
	// node's mountpoint stops being imported with its last viewer here.
	defer old.removeViewer(v.s)
	v.mu.Lock()
	v.mp = target
	v.mu.Unlock()
	for i, vs := range streams {
		st := matchStream(target, vs, i)
		if st == nil {
			continue
		}
		if vs.dc != nil {
			v.setData(vs, false)
			v.mu.Lock()
			vs.st = st
			v.mu.Unlock()
			continue
		}
		if err := vs.down.SetReceiver(st.recv); err != nil {
			continue
		}
		v.mu.Lock()
		vs.st = st
		v.mu.Unlock()
		requestKeyframes(vs)
	}
	v.applyPause() // resubscribes data streams, and follows the target's enabled state
	v.s.push(tx, map[string]any{Short: "event", "result": map[string]any{"switched": "ok", "id": r.ID}}, nil)
	return nil
}

// matchStream finds the target's stream for a viewer's stream at position i.
func matchStream(target *mountpoint, vs *viewStream, i int) *mpStream {
	same := func(st *mpStream) bool {
		if st == nil || st.kind != vs.kind || st.simulcast != vs.simulcast || st.svc != vs.svc {
			return false
		}
		return vs.down == nil || st.codec == vs.down.Receiver().Codec()
	}
	if st := target.stream(vs.mid); same(st) {
		return st
	}
	if i < len(target.streams) && same(target.streams[i]) {
		return target.streams[i]
	}
	return nil
}
