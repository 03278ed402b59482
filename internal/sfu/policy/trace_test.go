package policy

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// toyPath is a bottleneck of a given capacity and an estimator that behaves like send-side GCC as
// far as a layer policy can tell: when more is sent than the link carries it reports over-use and
// drops to 0.85 × the capacity; otherwise it grows by 8 % per second but never above 1.5 × what is
// being sent (+10 kbit/s), so an application-limited sender does not learn the capacity without
// probing. Receivers report the fraction lost once a second.
type toyPath struct {
	capacity       func(time.Duration) cc.Bitrate
	est            cc.Bitrate
	sentBits, lost float64
	lastReport     time.Duration
	received       cc.Bitrate // what arrives: the acknowledged rate
	feedbackLoss   float64    // the loss transport feedback shows right now
	// audio is sent besides the video (0: not modelled); shared says when the cause of congestion
	// is shared by the server's subscribers (nil: never).
	audio  cc.Bitrate
	shared func(time.Duration) bool
	// sparse says when the feedback reports too few packets to tell their loss (nil: never).
	sparse func(time.Duration) bool
	// silent says when nothing arrives, so no feedback comes back at all (nil: never). The first
	// feedback after a silence reports the backlog the cut link held: the estimate halves.
	silent                     func(time.Duration) bool
	lastFeedback, unansweredAt time.Duration
	unanswered, wasSilent      bool
}

// feedback fills in the age of the feedback and how long what was sent has gone unanswered.
func (p *toyPath) feedback(now time.Duration, sent cc.Bitrate, in *Path) {
	if p.silent == nil || !p.silent(now) {
		p.lastFeedback, p.unanswered = now, false
		return
	}
	if sent+p.audio > 0 && !p.unanswered {
		p.unanswered, p.unansweredAt = true, now
	}
	in.FeedbackAge = now - p.lastFeedback
	if p.unanswered {
		in.Unanswered = now - p.unansweredAt
	}
}

func (p *toyPath) step(now, dt time.Duration, sent cc.Bitrate) (est cc.Bitrate, congested bool, loss float64) {
	if p.silent != nil {
		if p.silent(now) {
			p.wasSilent = true
			return p.est, false, -1 // no feedback: the verdicts stand, stale
		}
		if p.wasSilent {
			p.wasSilent, p.est = false, p.est/2
			return p.est, true, -1
		}
	}
	c := p.capacity(now)
	sent += p.audio
	p.received = min(sent, c)
	p.feedbackLoss = 0
	if sent > c {
		p.feedbackLoss = float64(sent-c) / float64(sent)
	}
	p.sentBits += float64(sent) * dt.Seconds()
	if sent > c {
		congested = true
		p.est = c * 85 / 100
		p.lost += float64(sent-c) * dt.Seconds()
	} else if limit := sent*3/2 + 10*cc.Kbps; p.est < limit {
		p.est = min(cc.BitrateFromFloat(float64(p.est)*math.Pow(1.08, dt.Seconds())), limit)
	}
	loss = -1
	if now-p.lastReport >= time.Second {
		loss = 0
		if p.sentBits > 0 {
			loss = p.lost / p.sentBits
		}
		p.sentBits, p.lost, p.lastReport = 0, 0, now
	}
	return p.est, congested, loss
}

// change is one decision that moved a track's target.
type change struct {
	at     time.Duration
	track  int
	from   Layer
	to     Layer
	reason string
}

type traceResult struct {
	changes []change
	targets func(at time.Duration) []Layer
	probeAt []time.Duration
}

// replay runs a policy against a toy path for d, deciding every 50 ms, with tracks whose targets
// and current layers follow the decisions (switches are immediate).
func replay(t *testing.T, pol Policy, tracks []Track, path *toyPath, d time.Duration, noise func() float64) traceResult {
	t.Helper()
	const tick = 50 * time.Millisecond
	var res traceResult
	history := map[time.Duration][]Layer{}
	var out Output
	usage := cc.Bitrate(0)
	for now := time.Duration(0); now <= d; now += tick {
		est, congested, loss := path.step(now, tick, usage+out.Probe)
		if noise != nil {
			est = cc.BitrateFromFloat(float64(est) * noise())
		}
		in := Input{Now: now, Path: Path{Estimate: est, Received: path.received, FeedbackLoss: path.feedbackLoss, LossKnown: path.sparse == nil || !path.sparse(now), Congested: congested, RTT: 50 * time.Millisecond}, Loss: loss, CanProbe: true, Tracks: tracks}
		in.Shared = path.shared != nil && path.shared(now)
		path.feedback(now, usage+out.Probe, &in.Path)
		pol.Decide(&in, &out)
		if len(out.Targets) != len(tracks) {
			t.Fatalf("%d targets for %d tracks", len(out.Targets), len(tracks))
		}
		if out.Probe > 0 {
			res.probeAt = append(res.probeAt, now)
		}
		usage = 0
		p := newPlan(tracks)
		for i := range tracks {
			if out.Targets[i] != tracks[i].Target {
				res.changes = append(res.changes, change{now, i, tracks[i].Target, out.Targets[i], out.Reason})
			}
			tracks[i].Target, tracks[i].Current = out.Targets[i], out.Targets[i]
			// The allocator marks a track the policy paused (not the subscriber) as starved.
			tracks[i].Starved = out.Targets[i].Spatial < 0 && !tracks[i].Paused
		}
		usage = p.usage(p.fromTargets(tracks))
		history[now] = append([]Layer(nil), out.Targets...)
	}
	res.targets = func(at time.Duration) []Layer { return history[at.Truncate(tick)] }
	return res
}

func constant(r cc.Bitrate) func(time.Duration) cc.Bitrate {
	return func(time.Duration) cc.Bitrate { return r }
}

// firstAt returns when track reaches want at or after from (or -1).
func (r traceResult) firstAt(from, until time.Duration, track int, ok func(Layer) bool) time.Duration {
	for at := from; at <= until; at += 50 * time.Millisecond {
		if l := r.targets(at); l != nil && ok(l[track]) {
			return at
		}
	}
	return -1
}

func (r traceResult) changesBetween(a, b time.Duration) int {
	n := 0
	for _, c := range r.changes {
		if c.at >= a && c.at < b {
			n++
		}
	}
	return n
}

func TestBWEReachesTheTopOnACleanLink(t *testing.T) {
	path := &toyPath{capacity: constant(5 * cc.Mbps), est: 300 * cc.Kbps}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, 20*time.Second, nil)
	top := res.firstAt(0, 20*time.Second, 0, func(l Layer) bool { return l == (Layer{2, 2}) })
	if top < 0 || top > 5*time.Second {
		t.Fatalf("top layer reached at %v (changes %v)", top, res.changes)
	}
	if n := res.changesBetween(top+50*time.Millisecond, 20*time.Second); n != 0 {
		t.Fatalf("%d changes after reaching the top on a clean link: %v", n, res.changes)
	}
}

// TestBWECutAndRestore is the shape of the integration test: a clean link is cut to 400 kbit/s for
// ten seconds and restored.
func TestBWECutAndRestore(t *testing.T) {
	cut, restore := 10*time.Second, 20*time.Second
	capacity := func(now time.Duration) cc.Bitrate {
		if now >= cut && now < restore {
			return 400 * cc.Kbps
		}
		return 5 * cc.Mbps
	}
	path := &toyPath{capacity: capacity, est: 300 * cc.Kbps}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, 40*time.Second, nil)
	fits := func(l Layer) bool { return simulcastRates()[l.Spatial][l.Temporal] <= 400*cc.Kbps }
	down := res.firstAt(cut, restore, 0, fits)
	if down < 0 || down-cut > 500*time.Millisecond {
		t.Fatalf("down to a layer that fits 400 kbit/s at %v after the cut (changes %v)", down-cut, res.changes)
	}
	back := res.firstAt(restore, 40*time.Second, 0, func(l Layer) bool { return l == (Layer{2, 2}) })
	if back < 0 || back-restore > 5*time.Second {
		t.Fatalf("back to the top %v after the restore (changes %v)", back-restore, res.changes)
	}
	t.Logf("down %v after the cut, top %v after the restore; %d changes in 40 s", down-cut, back-restore, len(res.changes))
	// During the cut the policy may try (probe) but must not flap the layer more than a few times.
	if n := res.changesBetween(down+time.Second, restore); n > 3 {
		t.Fatalf("%d layer changes during the 10 s cut: %v", n, res.changes)
	}
}

// TestBWEDoesNotFlickerWithNoisyEstimates replays a minute of an estimate that wanders ±10 %
// around 1 Mbit/s: at most two visible changes per minute once settled (the KPI from the anchors).
func TestBWEDoesNotFlickerWithNoisyEstimates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	noise := func() float64 { return 0.9 + 0.2*rng.Float64() }
	path := &toyPath{capacity: constant(cc.Mbps), est: 300 * cc.Kbps}
	res := replay(t, NewBWE(DefaultBWEConfig()), []Track{camera()}, path, 90*time.Second, noise)
	t.Logf("%d changes in 90 s, %d in the last minute", len(res.changes), res.changesBetween(30*time.Second, 90*time.Second))
	if n := res.changesBetween(30*time.Second, 90*time.Second); n > 2 {
		t.Fatalf("%d layer changes in the last minute: %v", n, res.changes)
	}
}

func TestBWEBacksOffAfterFailedProbes(t *testing.T) {
	// 200 kbit/s: the base layer fits, nothing above does; every probe fails.
	path := &toyPath{capacity: constant(200 * cc.Kbps), est: 150 * cc.Kbps}
	cfg := DefaultBWEConfig()
	cfg.ProbeBackoffMax = 4 * time.Second
	res := replay(t, NewBWE(cfg), []Track{camera()}, path, 30*time.Second, nil)
	starts := 0
	for i, at := range res.probeAt {
		if i == 0 || at-res.probeAt[i-1] > 100*time.Millisecond {
			starts++
		}
	}
	// At most one probe per ProbeBackoffMax (4 s) once backed off, plus the first few.
	if starts > 30/4+3 {
		t.Fatalf("%d probes in 30 s", starts)
	}
	if starts == 0 {
		t.Fatal("no probe at all while layers are missing")
	}
	for _, c := range res.changes {
		if simulcastRates()[c.to.Spatial][c.to.Temporal] > 200*cc.Kbps {
			t.Fatalf("upgraded to %v on a 200 kbit/s link", c.to)
		}
	}
}

func TestBWEHonoursCapsAndNewTracks(t *testing.T) {
	tracks := []Track{camera(), camera()}
	tracks[1].Max = Layer{0, 2}
	path := &toyPath{capacity: constant(10 * cc.Mbps), est: 300 * cc.Kbps}
	res := replay(t, NewBWE(DefaultBWEConfig()), tracks, path, 20*time.Second, nil)
	last := res.targets(20 * time.Second)
	if last[0] != (Layer{2, 2}) || last[1] != (Layer{0, 2}) {
		t.Fatalf("final targets %v, want s2t2 and the capped s0t2", last)
	}
}

func TestProbePolicyIsTrialAndError(t *testing.T) {
	path := &toyPath{capacity: constant(700 * cc.Kbps), est: 300 * cc.Kbps}
	res := replay(t, NewProbe(DefaultProbeConfig()), []Track{camera()}, path, 120*time.Second, nil)
	ups, downs := 0, 0
	for _, c := range res.changes {
		if c.from.Less(c.to) {
			ups++
		} else {
			downs++
		}
	}
	// It climbs one rung per 5 s until it overshoots 700 kbit/s, then keeps retrying with a growing
	// interval: several losses, but fewer retries as the back-off grows.
	if downs == 0 || ups < 5 {
		t.Fatalf("ups %d downs %d: %v", ups, downs, res.changes)
	}
	if res.changes[0].from != NoLayer {
		t.Fatalf("first change %v is not the initial placement", res.changes[0])
	}
	if first := res.changes[1].at; first < 4*time.Second || first > 6*time.Second {
		t.Fatalf("first step at %v, want after the 5 s step interval", first)
	}
	late := res.changesBetween(60*time.Second, 120*time.Second)
	early := res.changesBetween(0, 60*time.Second)
	if late > early {
		t.Fatalf("more changes in the second minute (%d) than in the first (%d): no back-off", late, early)
	}
}

func TestNewPolicyByName(t *testing.T) {
	for _, name := range append(Names(), "") {
		if _, err := New(name, DefaultConfig()); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	if _, err := New("nonsense", DefaultConfig()); err == nil {
		t.Error("unknown policy accepted")
	}
}

// TestBWEKeepsTheSpatialLayerThroughAnEstimateDip: once the estimate has caught up with the top
// layer, a one-second dip of it to 45 % with no
// loss (a noisy delay detector) drops temporal layers only.
func TestBWEKeepsTheSpatialLayerThroughAnEstimateDip(t *testing.T) {
	now := time.Duration(0)
	dip := func() float64 {
		if now >= 30*time.Second && now < 31*time.Second {
			return 0.45
		}
		return 1
	}
	path := &toyPath{capacity: constant(5 * cc.Mbps), est: 300 * cc.Kbps}
	pol := NewBWE(DefaultBWEConfig())
	res := replay(t, pol, []Track{camera()}, path, 40*time.Second, func() float64 { now += 50 * time.Millisecond; return dip() })
	for _, c := range res.changes {
		if c.at >= 29*time.Second && c.to.Spatial < 2 {
			t.Fatalf("spatial layer dropped during a lossless dip: %v", res.changes)
		}
	}
	if res.changesBetween(30*time.Second, 31*time.Second) == 0 {
		t.Fatalf("no temporal downgrade during the dip: %v", res.changes)
	}
}
