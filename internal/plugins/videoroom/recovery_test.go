package videoroom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pion/interceptor"

	"github.com/strata-rtc/strata/internal/config"
)

// TestVideoComesBackAfterTheLinkCollapses reproduces the fan-out benchmark's failure in process: a
// subscriber on the top layer has its link cut hard, below the base layer, behind the 200 ms
// drop-tail queue, then restored. strata must move it down (and tell it with slow_link), and the
// video must come back on its own and climb to the top again, though while the link is down the
// estimate falls far below every layer. A two-second cut keeps the base layer (a dip is not a
// collapse); a five-second one pauses the video, which must resume at a keyframe.
func TestVideoComesBackAfterTheLinkCollapses(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	for _, tc := range []struct {
		name   string
		rate   int64
		cut    time.Duration
		paused bool
	}{
		{"2s at 50 kbit/s", 50_000, 2 * time.Second, false},
		{"8s at 30 kbit/s", 30_000, 8 * time.Second, true}, // pausing takes 2.8-4.9 s of a cut (more under -race)
	} {
		t.Run(tc.name, func(t *testing.T) { linkCollapse(t, tc.rate, tc.cut, tc.paused) })
	}
}

func linkCollapse(t *testing.T, rate int64, length time.Duration, wantPaused bool) {
	admin := "http://" + freeAddr(t) + "/admin"
	c := startServer(t, func(cfg *config.Config) {
		cfg.Transports.Admin.Enabled = true
		cfg.Transports.Admin.Listen = strings.TrimSuffix(strings.TrimPrefix(admin, "http://"), "/admin")
		cfg.Transports.Admin.AdminSecret = adminSecret
	})
	h := attach(t, c)
	const room = 4343
	mustRequest(t, h, map[string]any{"request": "create", "room": room, "publishers": 2}, nil)
	pub := startPublisher(t, c, room, "camera")
	waitActive(t, h, room, pub.id)
	shaper := newLinkShaper(200 * time.Millisecond)
	sub := subscribe(t, c, room, pub.id, shaper)
	start := time.Now()
	top := func(l int) bool { return l == 2 }
	if d := sub.waitFrame(start, 10*time.Second, top); d < 0 {
		t.Fatalf("never reached the top layer (now %d)", sub.layerNow())
	} else {
		t.Logf("top layer %v after subscribing", d.Round(time.Millisecond))
	}
	time.Sleep(2 * time.Second)

	cut := time.Now()
	shaper.setRate(rate)
	// Watch the subscriber's video target through the admin API: "none" while strata has paused
	// it. lastPaused is the last time it was seen paused.
	var pausedAt, lastPaused time.Time
	watch := func(until time.Time) {
		for time.Now().Before(until) {
			if target, ok := subscriberVideoTarget(t, admin); ok && target == "none" {
				if pausedAt.IsZero() {
					pausedAt = time.Now()
				}
				lastPaused = time.Now()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	watch(cut.Add(length))
	restore := time.Now()
	shaper.setRate(0)
	if !pausedAt.IsZero() {
		for stillPaused := true; stillPaused && time.Since(restore) < 15*time.Second; {
			target, ok := subscriberVideoTarget(t, admin)
			if stillPaused = ok && target == "none"; stillPaused {
				lastPaused = time.Now()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The event is rate-limited (one per 5 s): one sent shortly before the cut (a transient
	// downgrade on a loaded machine) stands for it.
	slow := sub.waitEvent(func(e map[string]any) bool { return e["videoroom"] == "slow_link" })
	if at := slow["_at"].(time.Time); at.Before(cut.Add(-5*time.Second)) || at.After(restore) {
		t.Errorf("slow_link at %v after the cut, want during the cut", at.Sub(cut))
	} else if at.Before(cut) {
		t.Logf("slow_link %v before the cut (the one for the cut was rate-limited)", cut.Sub(at))
	}
	if br, _ := slow["current-bitrate"].(float64); br <= 0 || slow["room"] != float64(room) {
		t.Errorf("slow_link event %v, want the room and a current-bitrate", slow)
	}
	// Frames right after the restore drain what the cut link still held (up to 200 ms).
	const drained = 300 * time.Millisecond
	back := sub.waitFrame(restore.Add(drained), 14*time.Second, func(l int) bool { return l >= 0 })
	if back < 0 {
		t.Fatalf("no video after the link came back (%d frames in all)", len(sub.orderedFrames()))
	}
	back += drained
	up := sub.waitFrame(restore, 18*time.Second, top)
	if wantPaused && pausedAt.IsZero() {
		t.Fatalf("video never paused during a %v cut to %d bit/s", length, rate)
	}
	if !wantPaused && !pausedAt.IsZero() && pausedAt.Before(restore) {
		t.Errorf("video paused %v into a %v cut: the base layer should stay", pausedAt.Sub(cut).Round(time.Millisecond), length)
	}
	gap := longestGap(sub, cut, restore.Add(back))
	t.Logf("after the restore: video %v, top layer %v; longest gap in the video %v; shaper dropped %d",
		back.Round(time.Millisecond), up.Round(time.Millisecond), gap.Round(time.Millisecond), shaper.dropped.Load())
	if !pausedAt.IsZero() {
		t.Logf("paused %v after the cut, resumed %v after the restore", pausedAt.Sub(cut).Round(time.Millisecond),
			lastPaused.Sub(restore).Round(time.Millisecond))
		// Nothing is forwarded while paused: the first frame after it is the resumed video's, and
		// must be a keyframe.
		if f, ok := firstFrameAfter(sub, lastPaused); !ok || !f.keyframe {
			t.Errorf("video resumed with a delta frame (layer %d)", f.layer)
		}
	}
	// A paused video waits for its next resume probe, which backs off while the link is down. This
	// subscriber has no audio: while paused nothing is sent to it, nothing comes back, and only a
	// probe can find the link restored. The worst case is a probe that failed just before the
	// restore (or was failed by the backlog the feedback reports right after it): the next follows
	// resume_backoff_max (8 s) ± 20 % later, then the probe itself (0.5 s) and a keyframe.
	bound := 4 * time.Second
	if wantPaused {
		bound = 11 * time.Second
	}
	if back > bound {
		t.Errorf("video came back %v after the link did, want within %v", back, bound)
	}
	if up < 0 || up > bound+6*time.Second {
		t.Errorf("top layer %v after the link came back, want within %v", up, bound+6*time.Second)
	}
	_, bad, _, _ := sub.continuity(start)
	if bad != 0 {
		t.Errorf("%d layer changes without a keyframe", bad)
	}
}

// subscriberVideoTarget is the target layer ("s0t2", "none", ...) of the (only) subscriber's
// video stream, from the admin API's handle_info.
func subscriberVideoTarget(t *testing.T, admin string) (string, bool) {
	t.Helper()
	var target string
	found := forEachHandleInfo(admin, func(info map[string]any) bool {
		ps, _ := info["plugin_specific"].(map[string]any)
		if ps == nil || ps["type"] != "subscriber" {
			return false
		}
		streams, _ := ps["streams"].([]any)
		for _, s := range streams {
			if st, _ := s.(map[string]any); st != nil && st["type"] == "video" {
				target, _ = st["target"].(string)
				return true
			}
		}
		return false
	})
	return target, found
}

// firstFrameAfter is the first live frame that arrived after at.
func firstFrameAfter(s *testSubscriber, at time.Time) (rxFrame, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.frames {
		if f.live && f.layer >= 0 && f.at.After(at) {
			return f, true
		}
	}
	return rxFrame{}, false
}

// longestGap is the longest time without a new frame between from and to.
func longestGap(s *testSubscriber, from, to time.Time) time.Duration {
	var gap time.Duration
	last := from
	for _, f := range s.orderedFrames() {
		if !f.live || f.at.Before(from) || f.at.After(to) {
			continue
		}
		gap = max(gap, f.at.Sub(last))
		last = f.at
	}
	return gap
}

// TestVideoRidesOutALossBurst: two seconds of 30 % random loss (no queueing: a faulty link, not a
// full one) on a subscriber's link. Video must keep flowing through it and be back on the top layer
// soon after; before, GCC's loss controller formed a loss fraction from every feedback message and
// could cut the estimate every 300 ms + RTT, down to its floor.
func TestVideoRidesOutALossBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	c := startServer(t, nil)
	admin := attach(t, c)
	const room = 4344
	mustRequest(t, admin, map[string]any{"request": "create", "room": room, "publishers": 2}, nil)
	pub := startPublisher(t, c, room, "camera")
	waitActive(t, admin, room, pub.id)
	loss := newRandomLoss()
	sub := subscribeWith(t, c, room, pub.id, nil, clientOptions{innermost: []interceptor.Factory{loss}})
	start := time.Now()
	top := func(l int) bool { return l == 2 }
	if d := sub.waitFrame(start, 10*time.Second, top); d < 0 {
		t.Fatalf("never reached the top layer (now %d)", sub.layerNow())
	}
	time.Sleep(2 * time.Second)

	burst := time.Now()
	loss.setLoss(0.3)
	time.Sleep(2 * time.Second)
	end := time.Now()
	loss.setLoss(0)
	up := sub.waitFrame(end, 8*time.Second, top)
	t.Logf("30 %% loss for %v (%d packets dropped); top layer %v after it", end.Sub(burst).Round(time.Millisecond),
		loss.dropped.Load(), up.Round(time.Millisecond))
	if loss.dropped.Load() < 20 {
		t.Fatalf("only %d packets dropped: the burst did not happen", loss.dropped.Load())
	}
	if up < 0 || up > 5*time.Second {
		t.Errorf("top layer %v after the loss burst, want within 5 s", up)
	}
	if gap := longestGap(sub, burst, end.Add(up)); gap > time.Second {
		t.Errorf("no video for %v during or after the burst", gap.Round(time.Millisecond))
	}
}
