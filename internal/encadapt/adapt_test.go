package encadapt

import (
	"fmt"
	"math"
	"testing"
	"time"
)

const fps = 30

func frameTime(i int) time.Duration { return time.Duration(i) * time.Second / fps }

// The resolution ladder from 1280x720 is libwebrtc's: 3/4, 1/2, 3/8, 1/4, and no further than
// 320x180; going up retraces it to the capture's size and no further.
func TestLadder(t *testing.T) {
	l := newLadder(1280, 720)
	var got []string
	for l.down(l.out) {
		got = append(got, fmt.Sprintf("%dx%d", l.outW, l.outH))
	}
	for l.up(l.out) {
		got = append(got, fmt.Sprintf("%dx%d", l.outW, l.outH))
	}
	want := "[960x540 640x360 480x270 320x180 480x270 640x360 960x540 1280x720]"
	if fmt.Sprint(got) != want {
		t.Fatalf("ladder %v, want %s", got, want)
	}
	if w, h := l.size(); w != 1280 || h != 720 || l.steps != 0 {
		t.Fatalf("back at %dx%d with %d steps", w, h, l.steps)
	}
	// A 4:3 capture follows the same fractions.
	l = newLadder(640, 480)
	l.down(l.out)
	if w, h := l.size(); w != 480 || h != 360 {
		t.Fatalf("640x480 steps down to %dx%d", w, h)
	}
}

// run feeds the adapter frames at 30 fps from frame from to frame to, each encoded with the QP
// qp(i) (a negative QP: dropped by the encoder), at a target of rate; it returns the sizes each
// resolution change took, with the time.
func run(a *Adapter, from, to int, rate float64, qp func(i int) int) []string {
	var changes []string
	for i := from; i < to; i++ {
		now := frameTime(i)
		f := a.OnFrame(now, rate, rate)
		if f.Resized {
			changes = append(changes, fmt.Sprintf("%dx%d@%.1fs(%s)", f.Width, f.Height, now.Seconds(), f.Reason))
		}
		if f.Drop {
			continue
		}
		if q := qp(i); q < 0 {
			a.OnDropped()
		} else {
			a.OnEncoded(now, int(f.Rate/8/fps), q)
		}
	}
	return changes
}

func scaling(startRate float64) *Adapter {
	return New(Config{Width: 1280, Height: 720, FPS: fps, StartRate: startRate, MinRate: 30e3, Scale: true})
}

func constQP(q int) func(int) int { return func(int) int { return q } }

// High QP adapts down at the 2 s check, then (fast ramp-up over) every 5 s, down to 320x180 and
// no further.
func TestHighQPAdaptsDown(t *testing.T) {
	a := scaling(1e6)
	got := run(a, 0, 30*30, 1e6, constQP(110))
	want := "[960x540@2.0s(high QP) 640x360@7.0s(high QP) 480x270@12.0s(high QP) 320x180@17.0s(high QP)]"
	if fmt.Sprint(got) != want {
		t.Fatalf("changes %v, want %s", got, want)
	}
}

// The checks count from the first frame, not from time 0.
func TestChecksFromFirstFrame(t *testing.T) {
	a := scaling(1e6)
	var got []string
	for i := range 6 * 30 {
		now := 300*time.Millisecond + frameTime(i)
		if f := a.OnFrame(now, 1e6, 1e6); f.Resized {
			got = append(got, fmt.Sprintf("%.1fs", now.Seconds()))
		}
		a.OnEncoded(now, 4000, 120)
	}
	if fmt.Sprint(got) != "[2.3s]" {
		t.Fatalf("stepped down at %v, want 2.3 s", got)
	}
}

// Low QP after a step down adapts back up at the next check (5 s later), and not beyond the
// capture. The step down at the 2 s check (before frame 60) clears the samples, so the low QP
// starts with frame 60.
func TestLowQPAdaptsUp(t *testing.T) {
	a := scaling(1e6)
	got := run(a, 0, 60, 1e6, constQP(110))
	got = append(got, run(a, 60, 40*30, 1e6, constQP(20))...)
	want := "[960x540@2.0s(high QP) 1280x720@7.0s(low QP)]"
	if fmt.Sprint(got) != want {
		t.Fatalf("changes %v, want %s", got, want)
	}
}

// The thresholds are libwebrtc's and their gap is the hysteresis: QP 30 to 95 changes nothing,
// 96 adapts down, 29 adapts up.
func TestThresholds(t *testing.T) {
	for _, c := range []struct {
		first, then int
		want        string
	}{
		{95, 95, "[]"}, {30, 30, "[]"},
		{96, 60, "[960x540@2.0s(high QP)]"},
		{96, 30, "[960x540@2.0s(high QP)]"},
		{96, 29, "[960x540@2.0s(high QP) 1280x720@7.0s(low QP)]"},
	} {
		a := scaling(1e6)
		got := run(a, 0, 60, 1e6, constQP(c.first))
		got = append(got, run(a, 60, 20*30, 1e6, constQP(c.then))...)
		if fmt.Sprint(got) != c.want {
			t.Errorf("QP %d then %d: changes %v, want %s", c.first, c.then, got, c.want)
		}
	}
}

// The smoothed QP follows time, not frame counts: a brief spike in a moderate stream does not
// adapt, a sustained rise does.
func TestQPSmoothing(t *testing.T) {
	a := scaling(1e6)
	spike := func(i int) int {
		if i >= 50 && i < 55 {
			return 127
		}
		return 60
	}
	if got := run(a, 0, 10*30, 1e6, spike); len(got) != 0 {
		t.Fatalf("a 5-frame spike adapted: %v", got)
	}
	var s qpSmoother
	s.alpha, s.empty = alphaHigh, true
	s.add(0, 40)
	s.add(time.Second, 100)
	if want := 40*math.Pow(alphaHigh, 1000) + 100*(1-math.Pow(alphaHigh, 1000)); math.Abs(s.value-want) > 1e-9 {
		t.Fatalf("smoothed %v, want %v", s.value, want)
	}
}

// Frames the encoder drops count: 60 % of them adapt down whatever the QP.
func TestDropsAdaptDown(t *testing.T) {
	a := scaling(1e6)
	drops := func(i int) int { // 3 of 5 dropped
		if i%5 < 3 {
			return -1
		}
		return 40
	}
	got := run(a, 0, 3*30, 1e6, drops)
	if want := "[960x540@2.0s(frame drops)]"; fmt.Sprint(got) != want {
		t.Fatalf("changes %v, want %s", got, want)
	}
	a = scaling(1e6)
	fewer := func(i int) int { // 2 of 5 dropped
		if i%5 < 2 {
			return -1
		}
		return 40
	}
	if got := run(a, 0, 3*30, 1e6, fewer); len(got) != 0 {
		t.Fatalf("40 %% drops adapted: %v", got)
	}
}

// A check needs 60 frames: at 10 fps nothing happens at 2 s, and after the fast ramp-up the
// checks come every second while frames are too few.
func TestMinFrames(t *testing.T) {
	q := newQualityScaler(0)
	for i := range 20 {
		q.encoded(time.Duration(i)*100*time.Millisecond, 120)
	}
	if !q.due(2*time.Second) || q.check(2*time.Second) != qpFewSamples || q.next != 4*time.Second {
		t.Fatalf("check with 20 frames: next at %v", q.next)
	}
	for i := range 40 {
		q.encoded(2*time.Second+time.Duration(i)*50*time.Millisecond, 120)
	}
	if r := q.check(4 * time.Second); r != qpHigh || q.next != 9*time.Second {
		t.Fatalf("check with 60 frames: %v, next at %v", r, q.next)
	}
	if r := q.check(9 * time.Second); r != qpFewSamples || q.next != 10*time.Second {
		t.Fatalf("check after clearing: %v, next at %v", r, q.next)
	}
}

// A start bitrate under 500 kbit/s drops the first 720p and 540p frames and starts at 640x360;
// under 300 kbit/s it drops four and starts at 320x180; 500 kbit/s and more drops none; without
// scaling nothing is dropped.
func TestInitialDrops(t *testing.T) {
	for _, c := range []struct {
		start float64
		scale bool
		drops int
		size  string
	}{
		{300e3, true, 2, "640x360"}, {250e3, true, 4, "320x180"}, {500e3, true, 0, "1280x720"},
		{100e3, false, 0, "1280x720"},
	} {
		a := New(Config{Width: 1280, Height: 720, FPS: fps, StartRate: c.start, Scale: c.scale})
		drops := 0
		for i := range 10 {
			f := a.OnFrame(frameTime(i), c.start, c.start)
			if f.Drop {
				drops++
				continue
			}
			a.OnEncoded(frameTime(i), 1000, 50)
		}
		if w, h := a.Size(); drops != c.drops || fmt.Sprintf("%dx%d", w, h) != c.size {
			t.Errorf("start %.0f kbit/s: %d drops, %dx%d; want %d, %s", c.start/1e3, drops, w, h, c.drops, c.size)
		}
	}
}

// encodeWith runs an encoder that makes each frame over times its given rate's share, for n
// frames at a target of 600 kbit/s, and returns the adapter's last factor and the rate it sent
// over the last second.
func encodeWith(over float64, n int, link float64) (factor, sent float64) {
	a := New(Config{Width: 640, Height: 360, FPS: fps, MinRate: 30e3, Adjust: true})
	const target = 600e3
	var last float64
	for i := range n {
		now := frameTime(i)
		f := a.OnFrame(now, target, max(link, target))
		bytes := int(over * f.Rate / 8 / fps)
		a.OnEncoded(now, bytes, 50)
		if i >= n-fps {
			last += float64(bytes * 8)
		}
	}
	return a.Factor(), last
}

// The adjuster divides the target by the measured overshoot: an encoder 50 % over its rate ends
// sending the target; one that meets or undershoots its rate gets the target; the factor is at
// most 2; before 30 frames it is libwebrtc's default 1.2.
func TestOvershootFactor(t *testing.T) {
	for _, c := range []struct {
		over, factor, sent float64
		frames             int
	}{
		{1.5, 1.5, 600e3, 300}, {1, 1, 600e3, 300}, {0.8, 1, 480e3, 300}, {3, 2, 900e3, 300},
		{1.5, 1.2, 750e3, 29},
	} {
		f, sent := encodeWith(c.over, c.frames, 0)
		if c.frames < fps {
			sent = sent * fps / float64(c.frames)
		}
		if math.Abs(f-c.factor) > 0.03 || math.Abs(sent-c.sent) > 0.04*c.sent {
			t.Errorf("encoder at %.1fx: factor %.3f, sent %.0f kbit/s; want %.2f, %.0f", c.over, f, sent/1e3, c.factor, c.sent/1e3)
		}
	}
}

// Frame by frame: a frame of twice the ideal size into an empty buffer is not an overshoot; the
// next one, finding a frame's worth still queued, is.
func TestOvershootDetector(t *testing.T) {
	d := overshootDetector{}
	d.setTarget(0, 300e3, 30) // ideal frame 10000 bits
	d.encoded(0, 1250)        // first frame: its own ratio
	d.encoded(33*time.Millisecond, 2500)
	d.encoded(66*time.Millisecond, 2500)
	n, _, ok := d.factors(66 * time.Millisecond)
	// Frame 1: factor 1. Frame 2: buffer 10000-9900=100 before, 20100 in: overshoot 100 → 1.01.
	// Frame 3: buffer 20000-9900=10100, overshoot min(10100, 20100) → 2.01.
	want := (1 + 1.01 + 2.01) / 3
	if !ok || math.Abs(n-want) > 1e-9 {
		t.Fatalf("network factor %v (%v), want %v", n, ok, want)
	}
	if _, _, ok := d.factors(66*time.Millisecond + overshootWindow + time.Millisecond); ok {
		t.Fatal("factors outlive the 3 s window")
	}
}

// The adjusted rate never goes under the codec's minimum.
func TestAdjusterMinRate(t *testing.T) {
	a := newAdjuster(30e3)
	for i := range 100 {
		r := a.rate(frameTime(i), 40e3, 40e3, fps)
		if r < 30e3 {
			t.Fatalf("frame %d: rate %.0f under the minimum", i, r)
		}
		a.encoded(frameTime(i), int(3*r/8/fps))
	}
	if r := a.rate(frameTime(100), 20e3, 20e3, fps); r != 30e3 {
		t.Fatalf("a target under the minimum gives %.0f", r)
	}
}

// Headroom in the allocation above a capped target pays for the overshoot the media rate does
// not show.
func TestAdjusterHeadroom(t *testing.T) {
	f0, _ := encodeWith(1.5, 300, 0)
	f1, _ := encodeWith(1.5, 300, 2e6)
	if f1 > f0 {
		t.Fatalf("headroom raised the factor: %.3f without, %.3f with", f0, f1)
	}
}
