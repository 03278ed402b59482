package echotest

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

func key() *media.Flags   { return &media.Flags{Keyframe: true, Start: true, TID: 0, SID: -1} }
func delta() *media.Flags { return &media.Flags{Start: true, TID: 0, SID: -1} }

func TestSimulcastStartsOnTheTargetsKeyframe(t *testing.T) {
	s := newSimulcastSelector() // target 2
	ms := time.Millisecond
	// All three layers flowing; nothing is echoed until layer 2 has a keyframe.
	for l := range 3 {
		if sel := s.accept(l, delta(), 0); sel.forward {
			t.Fatalf("layer %d forwarded before any keyframe", l)
		}
	}
	if sel := s.accept(2, delta(), ms); sel.forward || !sel.wantKeyframe {
		t.Fatalf("target layer without keyframe: %+v", sel)
	}
	if sel := s.accept(0, key(), 2*ms); sel.forward {
		t.Fatal("keyframe on a layer that is not the target was taken")
	}
	if sel := s.accept(2, key(), 3*ms); !sel.forward || !sel.switched || s.current != 2 {
		t.Fatalf("keyframe on the target: %+v current %d", sel, s.current)
	}
	if sel := s.accept(1, key(), 4*ms); sel.forward {
		t.Fatal("other layer forwarded while on target")
	}
}

func TestSimulcastSwitchWaitsForKeyframeAndFallsBack(t *testing.T) {
	s := newSimulcastSelector()
	ms := time.Millisecond
	s.accept(0, key(), 0)
	s.accept(1, key(), 0)
	s.accept(2, key(), 0)
	s.target = 0
	if sel := s.accept(2, delta(), ms); !sel.forward || !sel.wantKeyframe {
		t.Fatalf("old layer must keep flowing while waiting: %+v", sel)
	}
	s.accept(1, key(), ms)
	s.accept(0, delta(), ms)
	if s.current != 2 {
		t.Fatal("switched without a keyframe of the target")
	}
	if sel := s.accept(0, key(), 2*ms); !sel.switched || s.current != 0 {
		t.Fatalf("no switch on the target's keyframe: %+v", sel)
	}
	// Back up to 2, but the browser paused layer 2: the selector falls back to layer 1.
	s.target = 2
	now := 2 * ms
	for i := 1; i <= 40; i++ {
		now = time.Duration(i) * 20 * ms
		s.accept(0, delta(), now)
		s.accept(1, delta(), now)
	}
	if got := s.effective(now); got != 1 {
		t.Fatalf("effective layer with 2 stale: %d, want 1", got)
	}
	if sel := s.accept(1, key(), now); !sel.switched || s.current != 1 {
		t.Fatalf("fallback to layer 1: %+v current %d", sel, s.current)
	}
}

func TestSimulcastTemporalLayers(t *testing.T) {
	s := newSimulcastSelector()
	s.accept(2, key(), 0)
	s.temporalTarget = 0
	tl := func(tid int8, up bool) *media.Flags { return &media.Flags{TID: tid, SID: -1, SwitchUp: up} }
	if sel := s.accept(2, tl(1, false), 1); sel.forward || !sel.temporalChanged || s.temporal != 0 {
		t.Fatalf("going down must be immediate: %+v", sel)
	}
	if sel := s.accept(2, tl(0, false), 2); !sel.forward {
		t.Fatal("base layer dropped")
	}
	s.temporalTarget = 2
	if sel := s.accept(2, tl(2, false), 3); sel.forward || s.temporal != 0 {
		t.Fatal("went up without a switching point")
	}
	if sel := s.accept(2, tl(1, true), 4); !sel.forward || !sel.temporalChanged || s.temporal != 2 {
		t.Fatalf("switching-up point ignored: %+v", sel)
	}
}

func TestSVCDropsLayersAboveTarget(t *testing.T) {
	s := newSVCSelector()
	vp9 := func(sid, tid int8, start, end, key bool) *media.Flags {
		return &media.Flags{SID: sid, TID: tid, Start: start, End: end, Keyframe: key}
	}
	s.spatialTarget, s.temporalTarget = 1, 0
	// A picture: S0 (start), S1, S2 (end, marker on the wire).
	if sel := s.accept(vp9(0, 0, true, true, false)); !sel.forward || !sel.switched || s.spatial != 1 || sel.setMarker {
		t.Fatalf("S0 at picture start: %+v spatial %d", sel, s.spatial)
	}
	if sel := s.accept(vp9(1, 0, true, true, false)); !sel.forward || !sel.setMarker {
		t.Fatalf("S1 must end the forwarded picture: %+v", sel)
	}
	if sel := s.accept(vp9(2, 0, true, true, false)); sel.forward {
		t.Fatal("S2 forwarded above the target")
	}
	if sel := s.accept(vp9(0, 1, true, false, false)); sel.forward {
		t.Fatal("temporal layer 1 forwarded above the target")
	}
	// Going up in space needs a keyframe.
	s.spatialTarget = 2
	if sel := s.accept(vp9(0, 0, true, false, false)); !sel.wantKeyframe || s.spatial != 1 {
		t.Fatalf("spatial up without keyframe: %+v", sel)
	}
	if sel := s.accept(vp9(0, 0, true, false, true)); !sel.switched || s.spatial != 2 {
		t.Fatalf("spatial up on keyframe: %+v", sel)
	}
	if sel := s.accept(&media.Flags{SID: -1, TID: -1}); !sel.forward {
		t.Fatal("payload without layer info must pass")
	}
}
