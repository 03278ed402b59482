package sfu

import (
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// dropKind says how a packet that is not forwarded affects the output numbering.
type dropKind uint8

const (
	dropOther   dropKind = iota // from a source not being forwarded: nothing to renumber
	dropPartial                 // from the forwarded source, a layer the picture goes on without
	dropPicture                 // from the forwarded source, a whole picture (a temporal layer)
)

// decision is a selector's verdict on one packet.
type decision struct {
	forward bool
	drop    dropKind
	// switched: the source changed with this packet (the rewriter must re-anchor).
	switched bool
	// changed: the forwarded layer changed (spatial or temporal): tell the subscriber.
	changed bool
	// keyframeLayer ≥ 0 asks for a keyframe on that layer.
	keyframeLayer int
	// setMarker: this packet ends the highest forwarded layer of its picture (SVC).
	setMarker bool
}

// selector decides, packet by packet, what a down-track forwards. Targets change only the wish;
// the forwarded layer moves at points where the subscriber can decode the result.
type selector interface {
	setTarget(policy.Layer)
	target() policy.Layer
	current() policy.Layer
	selectPacket(layer int, f media.Flags, now time.Duration) decision
	// keyframeNeeded is the layer whose keyframe the target waits for (-1: none), so that a new
	// target can ask for it at once rather than at the next packet.
	keyframeNeeded(now time.Duration) int
	// forwardAll makes the selector forward every layer up to ceiling within the stream it
	// forwards (a switch thins it: DownTrack.SetEnforced), or follow the target again.
	forwardAll(on bool, ceiling policy.Layer)
	// packetLayer is a packet's layer as LayerMarks indexes it: its spatial layer (a simulcast
	// encoding, an SVC spatial id) and temporal id, 0 where it has none.
	packetLayer(layer int, f media.Flags) (s, t int8)
	// within says whether forwarding target l includes packets of layer (s, t).
	within(s, t int8, l policy.Layer) bool
}

// clampLayer keeps a packet's layer ids inside LayerMarks.
func clampLayer(s, t int8) (int8, int8) {
	return min(max(s, 0), policy.MaxSpatial-1), min(max(t, 0), policy.MaxTemporal-1)
}

// simulcastSelector picks one of several independent streams (simulcast layers, or a single stream
// with only temporal layers) and, within it, a temporal layer. It switches streams only on a
// keyframe of the new one and keeps forwarding the old one until then; temporal layers go down at
// the next frame and up at a layer-sync frame.
type simulcastSelector struct {
	want    policy.Layer
	cur     policy.Layer // Spatial -1 until the first keyframe
	flowing func(layer int, now time.Duration) bool
	// all: forward every temporal layer up to ceil (a switch thins them).
	all  bool
	ceil int8
}

// newSimulcastSelector takes the receiver's view of which layers are flowing.
func newSimulcastSelector(flowing func(layer int, now time.Duration) bool) *simulcastSelector {
	return &simulcastSelector{want: policy.TopLayer, cur: policy.NoLayer, flowing: flowing}
}

func (s *simulcastSelector) setTarget(l policy.Layer) { s.want = l }
func (s *simulcastSelector) target() policy.Layer     { return s.want }
func (s *simulcastSelector) current() policy.Layer    { return s.cur }

func (s *simulcastSelector) forwardAll(on bool, ceiling policy.Layer) {
	s.all, s.ceil = on, ceiling.Temporal
}

func (s *simulcastSelector) packetLayer(layer int, f media.Flags) (int8, int8) {
	return clampLayer(int8(min(layer, policy.MaxSpatial)), f.TID)
}

func (s *simulcastSelector) within(_, t int8, l policy.Layer) bool { return t <= l.Temporal }

// wantTemporal is the temporal layer aimed at: the target's, or the ceiling when forwarding all.
func (s *simulcastSelector) wantTemporal() int8 {
	if s.all {
		return s.ceil
	}
	return s.want.Temporal
}

// effective is the stream to aim for now: the highest flowing one at or below the target, else the
// lowest flowing one above it.
func (s *simulcastSelector) effective(now time.Duration) int {
	t := int(max(s.want.Spatial, 0))
	for l := t; l >= 0; l-- {
		if s.flowing(l, now) {
			return l
		}
	}
	for l := t + 1; l < policy.MaxSpatial; l++ {
		if s.flowing(l, now) {
			return l
		}
	}
	return t
}

func (s *simulcastSelector) selectPacket(layer int, f media.Flags, now time.Duration) decision {
	d := decision{keyframeLayer: -1}
	if layer < 0 || layer >= policy.MaxSpatial || s.want.Spatial < 0 {
		return d
	}
	want := s.effective(now)
	if layer != int(s.cur.Spatial) {
		if layer != want {
			return d
		}
		if !f.Keyframe || !f.Start {
			d.keyframeLayer = layer
			return d
		}
		s.cur = policy.Layer{Spatial: int8(layer), Temporal: s.wantTemporal()}
		d.switched, d.changed = true, true
	} else if want != layer {
		d.keyframeLayer = want // keep forwarding this layer until the wanted one has a keyframe
	}
	if f.TID < 0 {
		d.forward = true
		return d
	}
	if f.Start && !d.switched {
		d.changed = s.moveTemporal(f) || d.changed
	}
	d.forward = f.TID <= s.cur.Temporal
	if !d.forward {
		d.drop = dropPicture
	}
	return d
}

func (s *simulcastSelector) keyframeNeeded(now time.Duration) int {
	if s.want.Spatial < 0 {
		return -1
	}
	if want := s.effective(now); want != int(s.cur.Spatial) {
		return want
	}
	return -1
}

// moveTemporal applies the temporal target at a frame start: down at once, up at a layer-sync
// frame (or keyframe) of a layer not above the target.
func (s *simulcastSelector) moveTemporal(f media.Flags) bool {
	want := s.wantTemporal()
	switch {
	case want < s.cur.Temporal:
		s.cur.Temporal = want
		return true
	case f.Keyframe && want > s.cur.Temporal:
		s.cur.Temporal = want
		return true
	case want > s.cur.Temporal && f.SwitchUp && f.TID > s.cur.Temporal && f.TID <= want:
		s.cur.Temporal = f.TID
		return true
	}
	return false
}

// svcSelector drops spatial and temporal layers of one scalable stream (VP9 SVC, AV1 with the
// Dependency Descriptor). Spatial layers go up at a switch point of the new layer (a keyframe, or a
// layer frame that does not depend on earlier pictures) and down at the start of a picture;
// temporal layers go up at a switching-up point and down at the start of a picture. When upper
// spatial layers are dropped, the RTP marker moves to the end of the highest forwarded layer frame.
type svcSelector struct {
	want policy.Layer
	cur  policy.Layer
	// all: forward every layer up to ceil (a switch thins them).
	all  bool
	ceil policy.Layer
}

func newSVCSelector() *svcSelector {
	return &svcSelector{want: policy.TopLayer, cur: policy.NoLayer}
}

func (s *svcSelector) setTarget(l policy.Layer) { s.want = l }
func (s *svcSelector) target() policy.Layer     { return s.want }
func (s *svcSelector) current() policy.Layer    { return s.cur }

func (s *svcSelector) forwardAll(on bool, ceiling policy.Layer) { s.all, s.ceil = on, ceiling }

func (s *svcSelector) packetLayer(_ int, f media.Flags) (int8, int8) { return clampLayer(f.SID, f.TID) }

func (s *svcSelector) within(sid, tid int8, l policy.Layer) bool {
	return sid <= l.Spatial && tid <= l.Temporal
}

// goal is the layer aimed at: the target, or the ceiling when forwarding all.
func (s *svcSelector) goal() policy.Layer {
	if s.all {
		return s.ceil
	}
	return s.want
}

// keyframeNeeded: an SVC stream may reach a higher spatial layer at a switch point without a
// keyframe, so the selector asks only when it meets a picture that is none (selectPacket).
func (s *svcSelector) keyframeNeeded(time.Duration) int { return -1 }

func (s *svcSelector) selectPacket(_ int, f media.Flags, _ time.Duration) decision {
	d := decision{keyframeLayer: -1}
	if s.want.Spatial < 0 {
		return d
	}
	want := s.goal()
	if s.cur.Spatial < 0 { // nothing forwarded yet: start at a keyframe
		if !f.Keyframe || !f.Start {
			d.keyframeLayer = 0
			return d
		}
		s.cur = want
		d.switched, d.changed = true, true
	}
	if f.SID < 0 || f.TID < 0 {
		d.forward = true
		return d
	}
	sid, tid := f.SID, f.TID
	pictureStart := f.Start && sid == 0
	switch {
	case f.Keyframe && pictureStart && s.cur != want: // every layer of a keyframe picture decodes
		s.cur, d.changed = want, true
	case want.Spatial > s.cur.Spatial && f.SpatialSwitch && sid > s.cur.Spatial && sid <= want.Spatial:
		s.cur.Spatial, d.changed = sid, true
	case want.Spatial > s.cur.Spatial && pictureStart:
		d.keyframeLayer = 0 // k-SVC streams only switch up at keyframes
	case want.Spatial < s.cur.Spatial && pictureStart:
		s.cur.Spatial, d.changed = want.Spatial, true
	}
	switch {
	case want.Temporal < s.cur.Temporal && pictureStart:
		s.cur.Temporal, d.changed = want.Temporal, true
	case want.Temporal > s.cur.Temporal && f.Start && f.SwitchUp && tid > s.cur.Temporal && tid <= want.Temporal:
		s.cur.Temporal, d.changed = tid, true
	}
	d.forward = sid <= s.cur.Spatial && tid <= s.cur.Temporal
	switch {
	case d.forward:
		d.setMarker = sid == s.cur.Spatial && f.End
	case tid > s.cur.Temporal:
		d.drop = dropPicture
	default:
		d.drop = dropPartial
	}
	return d
}

// passSelector forwards everything (audio).
type passSelector struct{ want policy.Layer }

func (p *passSelector) setTarget(l policy.Layer)                  { p.want = l }
func (p *passSelector) target() policy.Layer                      { return p.want }
func (p *passSelector) current() policy.Layer                     { return p.want }
func (p *passSelector) keyframeNeeded(time.Duration) int          { return -1 }
func (p *passSelector) forwardAll(bool, policy.Layer)             {}
func (p *passSelector) packetLayer(int, media.Flags) (int8, int8) { return 0, 0 }
func (p *passSelector) within(int8, int8, policy.Layer) bool      { return true }
func (p *passSelector) selectPacket(int, media.Flags, time.Duration) decision {
	return decision{forward: p.want.Spatial >= 0, keyframeLayer: -1}
}
