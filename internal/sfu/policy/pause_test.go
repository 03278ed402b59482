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

// TestBWEResumesAtOnceWhenThePathThatStarvedTheAudioRecovers: a cut to 30 kbit/s starves even the
// audio (40 kbit/s) for 20 s, long enough for the resume probes to back off to their longest
// interval. The audio's own feedback shows the path full, then clean once it recovers: the video
// must not wait out the backoff (up to 8 s) but be probed for and resumed within a couple of
// seconds.
func TestBWEResumesAtOnceWhenThePathThatStarvedTheAudioRecovers(t *testing.T) {
	cut, restore := 10*time.Second, 30*time.Second
	path := &toyPath{capacity: outage(cut, restore, 30*cc.Kbps), est: 300 * cc.Kbps, audio: 40 * cc.Kbps}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, 45*time.Second, nil)
	paused := res.firstAt(cut, restore, 0, func(l Layer) bool { return l == NoLayer })
	if paused < 0 {
		t.Fatalf("video never paused (changes %v)", res.changes)
	}
	back := res.firstAt(restore, 45*time.Second, 0, func(l Layer) bool { return l != NoLayer })
	t.Logf("paused %v after the cut, resumed %v after the restore; %d probes while paused",
		paused-cut, back-restore, res.probeStarts(paused, restore))
	if back < 0 || back-restore > 2*time.Second {
		t.Errorf("video resumed %v after the path recovered, want within 2 s", back-restore)
	}
	if n := res.probeStarts(paused, restore); n > 8 {
		t.Errorf("%d resume probes in the %v of the outage: the backoff did not hold", n, restore-paused)
	}
}

// TestBWEResumesAtOnceWhenThePathDied: the link is cut to 30 kbit/s, the video paused, and then
// the link dies (Wi-Fi gone): nothing arrives, not even the audio, so no feedback comes back at all
// and only its silence says the audio is starved. The feedback that follows the restore reports the
// backlog (over-use, the estimate halves), which fails a probe under way; the clean feedback after
// it must bring the video back at once, not after the backoff (up to 8 s), wherever the restore
// falls among the probes.
func TestBWEResumesAtOnceWhenThePathDied(t *testing.T) {
	cut := 10 * time.Second
	var worst time.Duration
	for restore := 25 * time.Second; restore < 35*time.Second; restore += 250 * time.Millisecond {
		silent := func(now time.Duration) bool { return now >= cut+2500*time.Millisecond && now < restore }
		path := &toyPath{capacity: outage(cut, restore, 30*cc.Kbps), est: 300 * cc.Kbps, audio: 40 * cc.Kbps, silent: silent}
		res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, restore+15*time.Second, nil)
		paused := res.firstAt(cut, restore, 0, func(l Layer) bool { return l == NoLayer })
		if paused < 0 {
			t.Fatalf("restore at %v: video never paused (changes %v)", restore, res.changes)
		}
		back := res.firstAt(restore, restore+15*time.Second, 0, func(l Layer) bool { return l != NoLayer })
		if back < 0 || back-restore > 2*time.Second {
			t.Errorf("restore at %v: video resumed %v after the path recovered, want within 2 s", restore, back-restore)
		}
		if n := res.probeStarts(paused, restore); n > 8 {
			t.Errorf("restore at %v: %d resume probes in the %v of the outage: the backoff did not hold", restore, n, restore-paused)
		}
		worst = max(worst, back-restore)
	}
	t.Logf("resumed at most %v after the restore", worst)
}

// TestBWEDoesNotPauseForASharedCause: the same collapse, but while many of the server's
// subscribers are congested at once (the server stalled): the layers go down to the base, the video
// is not paused.
func TestBWEDoesNotPauseForASharedCause(t *testing.T) {
	cut, restore := 5*time.Second, 15*time.Second
	path := &toyPath{capacity: outage(cut, restore, 30*cc.Kbps), est: 300 * cc.Kbps,
		shared: func(now time.Duration) bool { return now >= cut && now < restore }}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, 20*time.Second, nil)
	if at := res.firstAt(cut, 20*time.Second, 0, func(l Layer) bool { return l == NoLayer }); at >= 0 {
		t.Errorf("video paused %v after a shared congestion began", at-cut)
	}
	if at := res.firstAt(cut, restore, 0, func(l Layer) bool { return l.Spatial == 0 }); at < 0 {
		t.Errorf("the layers did not go down during the congestion (changes %v)", res.changes)
	}
}

// TestBWEResumeProbesDoNotBackOffForASharedCause: video paused for its own path keeps being probed
// for at the base interval while the failures have a shared cause.
func TestBWEResumeProbesDoNotBackOffForASharedCause(t *testing.T) {
	cut, restore := 5*time.Second, 30*time.Second
	sharedFrom := cut + 5*time.Second
	path := &toyPath{capacity: outage(cut, restore, 30*cc.Kbps), est: 300 * cc.Kbps,
		shared: func(now time.Duration) bool { return now >= sharedFrom }}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, restore, nil)
	if paused := res.firstAt(cut, sharedFrom, 0, func(l Layer) bool { return l == NoLayer }); paused < 0 {
		t.Fatalf("video never paused (changes %v)", res.changes)
	}
	// At the base interval (1 s ± 20 %, after a 0.5 s probe) 20 s hold at least 12 probes; backing
	// off to 8 s they would hold 4.
	if n := res.probeStarts(sharedFrom+5*time.Second, restore); n < 12 {
		t.Errorf("%d resume probes in 20 s of shared congestion, want at least 12", n)
	}
}

// TestBWEResumeProbesOfSubscribersPausedTogetherDrift: subscribers paused at the same moment must
// not probe in step (all at once, every time).
func TestBWEResumeProbesOfSubscribersPausedTogetherDrift(t *testing.T) {
	cut, restore := 5*time.Second, 40*time.Second
	var starts [2][]time.Duration
	for i := range starts {
		path := &toyPath{capacity: outage(cut, restore, 30*cc.Kbps), est: 300 * cc.Kbps}
		res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, restore, nil)
		for j, at := range res.probeAt {
			if j == 0 || at-res.probeAt[j-1] > 100*time.Millisecond {
				starts[i] = append(starts[i], at)
			}
		}
	}
	same := 0
	for j := range min(len(starts[0]), len(starts[1])) {
		if starts[0][j] == starts[1][j] {
			same++
		}
	}
	if n := min(len(starts[0]), len(starts[1])); n < 3 || same == n {
		t.Errorf("probe starts %v and %v: want several, not in step", starts[0], starts[1])
	}
}

// TestBWEResumesOnlyOnAProbeThatShowedSomething: on a path that delivers a few packets a second,
// the feedback during a probe reports too few packets to tell whether the probe lost any; such a
// probe must not resume the video (it would be resumed on a path that cannot carry it).
func TestBWEResumesOnlyOnAProbeThatShowedSomething(t *testing.T) {
	cut, unknownFrom := 5*time.Second, 10*time.Second
	path := &toyPath{capacity: outage(cut, unknownFrom, 30*cc.Kbps), est: 300 * cc.Kbps,
		sparse: func(now time.Duration) bool { return now >= unknownFrom }}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, 25*time.Second, nil)
	paused := res.firstAt(cut, unknownFrom, 0, func(l Layer) bool { return l == NoLayer })
	if paused < 0 {
		t.Fatalf("video never paused (changes %v)", res.changes)
	}
	if at := res.firstAt(unknownFrom, 25*time.Second, 0, func(l Layer) bool { return l != NoLayer }); at >= 0 {
		t.Errorf("resumed %v after the feedback stopped telling loss", at-unknownFrom)
	}
	if n := res.probeStarts(unknownFrom, 25*time.Second); n == 0 {
		t.Error("no resume probes")
	}
}
