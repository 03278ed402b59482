package videoroom_test

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// TestEachSubscriberGetsWhatItsPathCarries is the acceptance test: a publisher sends
// three-layer VP8 simulcast of real encoded frames; two subscribers receive it, one of them behind a
// link that is cut to 250 kbit/s and later restored. The limited one must move down within 1 s of
// the cut and back up within 5 s of the restore; the other must stay on the top layer; neither may
// see a layer change without a keyframe, and the unlimited one no sequence gap.
func TestEachSubscriberGetsWhatItsPathCarries(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	c := startServer(t, nil)
	admin := attach(t, c)
	const room = 4242
	mustRequest(t, admin, map[string]any{"request": "create", "room": room, "publishers": 2}, nil)
	pub := startPublisher(t, c, room, "camera")
	waitActive(t, admin, room, pub.id)

	shaper := newLinkShaper(200 * time.Millisecond)
	free := subscribe(t, c, room, pub.id, nil)
	limited := subscribe(t, c, room, pub.id, shaper)
	start := time.Now()

	top := func(l int) bool { return l == 2 }
	for name, s := range map[string]*testSubscriber{"unlimited": free, "limited": limited} {
		if d := s.waitFrame(start, 10*time.Second, top); d < 0 {
			t.Fatalf("%s subscriber never reached the top layer (now %d, %d packets, %d frames)", name, s.layerNow(), s.packets, len(s.frames))
		} else {
			t.Logf("%s subscriber on the top layer %v after subscribing", name, d.Round(time.Millisecond))
		}
	}
	warm := time.Now()
	time.Sleep(2 * time.Second)

	cut := time.Now()
	shaper.setRate(250_000)
	down := limited.waitFrame(cut, 3*time.Second, func(l int) bool { return l < 2 })
	if down < 0 || down > time.Second {
		t.Errorf("limited subscriber moved down %v after the cut, want within 1 s", down)
	}
	t.Logf("limited subscriber: first lower-layer frame %v after the cut", down.Round(time.Millisecond))
	time.Sleep(5 * time.Second)
	// Judged over the cut's last 3 s rather than at one instant: the allocator may try layer 1
	// (a probed upgrade, backing off from 1 s after each failure) and must come back down within
	// about a second, because only layer 0 fits 250 kbit/s.
	count, total, longest, n := limited.excursions(cut.Add(2*time.Second), time.Now(), 0)
	if n == 0 || total > 1500*time.Millisecond || longest > 1200*time.Millisecond {
		t.Errorf("limited subscriber in the cut's last 3 s: %d frames, %v off layer 0 in %d excursions, the longest %v; want at most 1.5 s in all, each within 1.2 s (only layer 0 fits 250 kbit/s)",
			n, total.Round(time.Millisecond), count, longest.Round(time.Millisecond))
	} else {
		t.Logf("limited subscriber in the cut's last 3 s: %d frames, %v off layer 0 in %d excursions", n, total.Round(time.Millisecond), count)
	}

	restore := time.Now()
	shaper.setRate(0)
	up := limited.waitFrame(restore, 8*time.Second, top)
	if up < 0 || up > 5*time.Second {
		t.Errorf("limited subscriber back on the top layer %v after the restore, want within 5 s", up)
	}
	t.Logf("limited subscriber: back on the top layer %v after the restore", up.Round(time.Millisecond))
	time.Sleep(time.Second)

	for _, f := range free.orderedFrames() {
		if f.at.After(warm) && f.layer >= 0 && f.layer != 2 {
			t.Fatalf("unlimited subscriber got layer %d at %v", f.layer, f.at.Sub(start))
		}
	}
	missing, bad, switches, unverifiable := free.continuity(warm)
	t.Logf("unlimited: %d packets, %d sequence numbers missing, %d layer changes (%d without keyframe)", free.packets, missing, switches, bad)
	if missing != 0 || bad != 0 || unverifiable != 0 {
		t.Errorf("unlimited subscriber: %d sequence numbers missing, %d layer changes without a keyframe", missing, bad+unverifiable)
	}
	missing, bad, switches, unverifiable = limited.continuity(start)
	t.Logf("limited: %d packets, %d sequence numbers never received (lost on the cut link), %d layer changes "+
		"(%d without keyframe, %d whose keyframe the link lost); shaper dropped %d",
		limited.packets, missing, switches, bad, unverifiable, shaper.dropped.Load())
	if bad != 0 {
		t.Errorf("limited subscriber: %d layer changes without a keyframe", bad)
	}
	if switches < 2 {
		t.Errorf("limited subscriber: %d layer changes, want at least down and up", switches)
	}
	if ev := limited.layerEvents(); len(ev) < 2 {
		t.Errorf("limited subscriber got %d substream events, want at least 2", len(ev))
	}
	t.Logf("publisher keyframe requests per layer: q %d, h %d, f %d", pub.plis[0].Load(), pub.plis[1].Load(), pub.plis[2].Load())
}

// waitActive waits until a participant publishes.
func waitActive(t testing.TB, handle *janusclient.Handle, room, id uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := mustRequest(t, handle, map[string]any{"request": "listparticipants", "room": room}, nil)
		for _, p := range data["participants"].([]any) {
			m := p.(map[string]any)
			if uint64(m["id"].(float64)) == id && m["publisher"] == true {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("publisher %d never became active", id)
}
