package policy

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// outage is a 5 Mbit/s path that carries only `during` between from and to.
func outage(from, to time.Duration, during cc.Bitrate) func(time.Duration) cc.Bitrate {
	return func(now time.Duration) cc.Bitrate {
		if now >= from && now < to {
			return during
		}
		return 5 * cc.Mbps
	}
}

// probeStarts counts probes (runs of padding) that started in [from, to).
func (r traceResult) probeStarts(from, to time.Duration) int {
	n := 0
	for i, at := range r.probeAt {
		if at >= from && at < to && (i == 0 || at-r.probeAt[i-1] > 100*time.Millisecond) {
			n++
		}
	}
	return n
}

// TestBWEPausesVideoTheBaseLayerCannotCrossAndResumesIt is the fan-out benchmark's failure as a
// trace: the path collapses to 30 kbit/s, far below the base layer (75 kbit/s), for ten seconds,
// then recovers. The base layer is kept through the first PauseHold (a dip is not a collapse), then
// the video is paused, probed for with backing-off padding while paused, and must come back once the
// path does — though with the video paused the estimate alone never could (GCC-like: capped at
// 1.5 × what is sent, and only audio, not modelled here, would be sent).
func TestBWEPausesVideoTheBaseLayerCannotCrossAndResumesIt(t *testing.T) {
	cut, restore := 10*time.Second, 20*time.Second
	path := &toyPath{capacity: outage(cut, restore, 30*cc.Kbps), est: 300 * cc.Kbps}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, 40*time.Second, nil)
	paused := res.firstAt(cut, restore, 0, func(l Layer) bool { return l == NoLayer })
	if paused < 0 {
		t.Fatalf("video never paused on a 30 kbit/s path (changes %v)", res.changes)
	}
	if paused-cut < DefaultBWEConfig().PauseHold {
		t.Fatalf("paused %v after the cut, before the %v hold", paused-cut, DefaultBWEConfig().PauseHold)
	}
	if paused-cut > 3*time.Second {
		t.Errorf("paused %v after the cut, want within 3 s", paused-cut)
	}
	back := res.firstAt(restore, 40*time.Second, 0, func(l Layer) bool { return l != NoLayer })
	if back < 0 {
		t.Fatalf("video never resumed after the path recovered (changes %v)", res.changes)
	}
	// A probe is due at most resume_backoff_max after the last failed one.
	if bound := DefaultBWEConfig().ResumeBackoffMax + time.Second; back-restore > bound {
		t.Errorf("video resumed %v after the path recovered, want within %v", back-restore, bound)
	}
	top := res.firstAt(back, 40*time.Second, 0, func(l Layer) bool { return l == (Layer{2, 2}) })
	t.Logf("paused %v after the cut, resumed %v after the restore, top layer %v after it; %d probes while paused",
		paused-cut, back-restore, top-restore, res.probeStarts(paused, restore))
	if top < 0 || top-back > 10*time.Second {
		t.Errorf("top layer %v after resuming, want within 10 s", top-back)
	}
	// Probing a path that cannot carry the base layer costs the audio: it must back off.
	if n := res.probeStarts(paused, restore); n == 0 || n > 5 {
		t.Errorf("%d resume probes in the %v of the outage, want some but backing off (≤ 5)", n, restore-paused)
	}
	for _, c := range res.changes {
		if c.at >= paused && c.at < restore && c.to != NoLayer {
			t.Errorf("resumed during the outage: %v", c)
		}
	}
}

// TestBWEKeepsTheBaseLayerWhenTheEstimateIsOnlyALittleBelow: a path of 60 kbit/s (the estimate
// about 70 % of the 75 kbit/s base layer) keeps its video at the base layer: no pause.
func TestBWEKeepsTheBaseLayerWhenTheEstimateIsOnlyALittleBelow(t *testing.T) {
	path := &toyPath{capacity: outage(5*time.Second, 30*time.Second, 60*cc.Kbps), est: 300 * cc.Kbps}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, 30*time.Second, nil)
	for _, c := range res.changes {
		if c.to == NoLayer {
			t.Fatalf("paused at %v with the estimate only a little below the base layer: %v", c.at, res.changes)
		}
	}
	if l := res.targets(29 * time.Second)[0]; l != (Layer{0, 0}) {
		t.Errorf("layer %v on a 60 kbit/s path, want the base s0t0", l)
	}
}

// TestBWEPausesCamerasBeforeScreenShares: two cameras and a screen share on a path that carries
// one base layer: the screen share keeps its video, the cameras are paused, the last first; when
// the path recovers the screen share's priority holds and the cameras come back one by one.
func TestBWEPausesCamerasBeforeScreenShares(t *testing.T) {
	screen := camera()
	screen.Screen = true
	tracks := []Track{camera(), camera(), screen}
	cut, restore := 10*time.Second, 20*time.Second
	path := &toyPath{capacity: outage(cut, restore, 100*cc.Kbps), est: 300 * cc.Kbps}
	res := replay(t, NewBWE(DefaultBWEConfig()), tracks, path, 45*time.Second, nil)
	during := res.targets(restore - 100*time.Millisecond)
	if during[2] == NoLayer || during[0] != NoLayer || during[1] != NoLayer {
		t.Fatalf("targets at the end of the outage %v, want both cameras paused and the screen share kept (changes %v)", during, res.changes)
	}
	var resumed []int
	for _, c := range res.changes {
		if c.at >= restore && c.from == NoLayer {
			resumed = append(resumed, c.track)
		}
	}
	if len(resumed) != 2 || resumed[0] != 0 || resumed[1] != 1 {
		t.Fatalf("cameras resumed in the order %v, want [0 1] (changes %v)", resumed, res.changes)
	}
}
