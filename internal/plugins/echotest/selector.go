package echotest

import (
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

// maxLayers is the number of simulcast substreams, spatial and temporal layers Janus's API knows.
const maxLayers = 3

// layerStale: a simulcast layer that sent nothing for this long is considered paused by the browser
// (Chrome stops sending its top layers when bandwidth is short), and the selector falls back.
const layerStale = 500 * time.Millisecond

// simulcastSelector picks which simulcast substream is echoed and which of its temporal layers. It
// switches substreams only on a keyframe of the new one, so the echo stays decodable; a change of
// temporal layer goes down at once and up at a switching-up point. Time is an argument. Like the
// SVC selector below it reads only media.Flags: what a codec's bytes mean is package media's business.
type simulcastSelector struct {
	target, current          int // substream: 0 lowest … 2 highest; current -1 until the first keyframe
	temporalTarget, temporal int
	lastSeen                 [maxLayers]time.Duration
	seen                     [maxLayers]bool
}

func newSimulcastSelector() simulcastSelector {
	return simulcastSelector{target: 2, current: -1, temporalTarget: 2, temporal: 2}
}

// selection is the outcome of offering one packet to a selector.
type selection struct {
	forward bool
	// switched: the substream (or spatial layer) changed with this packet; temporalChanged likewise.
	switched, temporalChanged bool
	// wantKeyframe: the selector waits for a keyframe on the layer it wants (send a PLI).
	wantKeyframe bool
	// setMarker: the packet ends the last forwarded layer of a picture (SVC).
	setMarker bool
}

// effective is the layer to aim for now: the highest active layer at or below the target, else the
// lowest active one above it.
func (s *simulcastSelector) effective(now time.Duration) int {
	active := func(l int) bool { return s.seen[l] && now-s.lastSeen[l] < layerStale }
	for l := s.target; l >= 0; l-- {
		if active(l) {
			return l
		}
	}
	for l := s.target + 1; l < maxLayers; l++ {
		if active(l) {
			return l
		}
	}
	return s.target
}

func (s *simulcastSelector) accept(layer int, f *media.Flags, now time.Duration) selection {
	var sel selection
	if layer < 0 || layer >= maxLayers {
		return sel
	}
	s.lastSeen[layer], s.seen[layer] = now, true
	want := s.effective(now)
	if layer != s.current {
		if layer != want {
			return sel
		}
		if !f.Keyframe {
			sel.wantKeyframe = true
			return sel
		}
		s.current, sel.switched = layer, true
	} else if want != s.current {
		sel.wantKeyframe = true // keep echoing this layer until the wanted one has a keyframe
	}
	sel.forward, sel.temporalChanged = s.temporalAccept(f)
	return sel
}

// temporalAccept applies the temporal target: down at once, up at a switching-up point or keyframe.
func (s *simulcastSelector) temporalAccept(f *media.Flags) (forward, changed bool) {
	if f.TID < 0 {
		return true, false
	}
	tid := int(f.TID)
	switch {
	case s.temporalTarget < s.temporal:
		s.temporal, changed = s.temporalTarget, true
	case s.temporalTarget > s.temporal && (f.Keyframe || (f.SwitchUp && tid <= s.temporalTarget && tid > s.temporal)):
		s.temporal, changed = s.temporalTarget, true
	}
	return tid <= s.temporal, changed
}

// svcSelector drops VP9 spatial and temporal layers above the targets. Spatial layers go up on a
// keyframe and down at the start of a picture; temporal layers go up at a switching-up point and
// down at once. When higher spatial layers are dropped, the RTP marker moves to the end of the
// highest forwarded layer, where the receiver expects the end of the picture.
type svcSelector struct {
	spatialTarget, spatial   int
	temporalTarget, temporal int
}

func newSVCSelector() svcSelector {
	return svcSelector{spatialTarget: 2, spatial: 2, temporalTarget: 2, temporal: 2}
}

func (s *svcSelector) accept(f *media.Flags) selection {
	var sel selection
	if f.SID < 0 || f.TID < 0 {
		sel.forward = true
		return sel
	}
	sid, tid := int(f.SID), int(f.TID)
	pictureStart := f.Start && sid == 0
	switch {
	case s.spatialTarget > s.spatial && f.Keyframe:
		s.spatial, sel.switched = s.spatialTarget, true
	case s.spatialTarget > s.spatial && pictureStart:
		sel.wantKeyframe = true
	case s.spatialTarget < s.spatial && pictureStart:
		s.spatial, sel.switched = s.spatialTarget, true
	}
	switch {
	case s.temporalTarget < s.temporal && pictureStart:
		s.temporal, sel.temporalChanged = s.temporalTarget, true
	case s.temporalTarget > s.temporal && (f.Keyframe || (f.SwitchUp && tid > s.temporal && tid <= s.temporalTarget)):
		s.temporal, sel.temporalChanged = s.temporalTarget, true
	}
	sel.forward = sid <= s.spatial && tid <= s.temporal
	sel.setMarker = sel.forward && sid == s.spatial && f.End
	return sel
}
