package client

import (
	"context"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/load/loadtest"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

// TestLightReceiverMatchesFull subscribes a light and a full receiver to the same simulcast
// publisher on strata, both asking for the top layer: over the same interval the light one counts
// the same packets and frames as the full one (which decrypts every packet), loses none, has its
// sample decrypted and verified, and its own transport-wide feedback lets strata's estimate
// climb to the 1.2 Mbit/s layer.
func TestLightReceiverMatchesFull(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	full := newEnv(t, httpURL, mediasrc.Layers, 2)
	light := newEnv(t, httpURL, mediasrc.Layers, 2)
	light.Light, light.Now = true, full.Now // one clock, so both count the same interval
	admin, err := Connect(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if err := admin.Create(ctx, full.Room, 2); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Destroy(ctx, full.Room) }()
	pub, err := JoinPublisher(ctx, full, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(ctx)
	fullSub, err := JoinSubscriber(ctx, full, 0, nil, []uint64{pub.ID})
	if err != nil {
		t.Fatal(err)
	}
	defer fullSub.Close(ctx)
	lightSub, err := JoinSubscriber(ctx, light, 1, nil, []uint64{pub.ID})
	if err != nil {
		t.Fatal(err)
	}
	defer lightSub.Close(ctx)

	// strata's estimator starts at 300 kbit/s and reaches the top layer in about 8 s.
	time.Sleep(12 * time.Second)
	before := counters(fullSub, lightSub, full.Now())
	time.Sleep(4 * time.Second)
	now := full.Now()
	after := counters(fullSub, lightSub, now)

	// The media is the same; a video stream may also carry the padding of strata's bandwidth
	// probes, which each subscriber gets on its own schedule, so video is compared by frames.
	for kind := range after {
		f, l := delta(after[kind][0], before[kind][0]), delta(after[kind][1], before[kind][1])
		t.Logf("%s over 4 s: full %+v, light %+v", kind, f, l)
		if l.packets == 0 || l.lost != 0 || diff(f.frames, l.frames) > 2 || kind == "audio" && diff(f.packets, l.packets) > 2 {
			t.Errorf("%s: light counted %d packets, %d frames (%d lost); full %d packets, %d frames", kind, l.packets, l.frames, l.lost, f.packets, f.frames)
		}
		if kind == "video" && l.bytes*8/4 < 900_000 {
			t.Errorf("light receiver got %d kbit/s of video: strata's estimate did not reach the 1.2 Mbit/s layer on its feedback", l.bytes*8/4/1000)
		}
	}
	for _, st := range lightSub.Streams() {
		s, lc := st.Summarize(now), st.LightCounts()
		t.Logf("light %s: %+v, %+v", st.Kind, s, lc)
		if s.TTFFMs < 0 || s.Frames == 0 || s.Freezes != 0 {
			t.Errorf("light %s: %+v", st.Kind, s)
		}
		if lc.Sampled == 0 || lc.BadSamples != 0 || lc.Verified+2 < lc.Sampled {
			t.Errorf("light %s sample: %+v", st.Kind, lc)
		}
	}
	for _, st := range fullSub.Streams() {
		t.Logf("full %s: %+v", st.Kind, st.Summarize(now))
	}
	if swallowed, reads, datagrams := lightSub.Swallowed(); swallowed == 0 || reads == 0 || datagrams < reads {
		t.Errorf("the light receiver counted %d packets at its socket (%d datagrams in %d reads)", swallowed, datagrams, reads)
	}
}

type tally struct{ packets, bytes, lost, frames uint64 }

// counters returns each kind's totals in the two subscriptions (full first).
func counters(full, light *Subscriber, now time.Duration) map[string][2]tally {
	out := map[string][2]tally{}
	for i, sub := range []*Subscriber{full, light} {
		for _, st := range sub.Streams() {
			s := st.Summarize(now)
			c := out[st.Kind]
			c[i] = tally{packets: s.Packets, bytes: s.Bytes, lost: s.Lost, frames: s.Frames}
			out[st.Kind] = c
		}
	}
	return out
}

func delta(a, b tally) tally {
	return tally{packets: a.packets - b.packets, bytes: a.bytes - b.bytes, lost: a.lost - b.lost, frames: a.frames - b.frames}
}

func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
