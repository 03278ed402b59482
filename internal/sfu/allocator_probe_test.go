package sfu

import (
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// probingEstimator is a fakeEstimator whose controller probes: it hands out queued clusters and
// records what the allocator does with them. ProbeSent counts the padding the down-track sent
// since BeginProbe (the real one counts every packet the interceptor sends).
type probingEstimator struct {
	fakeEstimator
	d *DownTrack

	mu        sync.Mutex
	queue     []cc.ProbeCluster
	requested []cc.Bitrate
	begun     []int
	ended     int
	active    int
	baseBytes uint64
}

func (e *probingEstimator) NextProbe() (cc.ProbeCluster, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.queue) == 0 {
		return cc.ProbeCluster{}, false
	}
	c := e.queue[0]
	e.queue = e.queue[1:]
	return c, true
}

func (e *probingEstimator) RequestProbe(rate cc.Bitrate) {
	e.mu.Lock()
	e.requested = append(e.requested, rate)
	e.mu.Unlock()
}

func (e *probingEstimator) BeginProbe(id int) {
	e.mu.Lock()
	e.begun = append(e.begun, id)
	e.active = id
	e.baseBytes = e.d.Stats().PaddingBytes
	e.mu.Unlock()
}

func (e *probingEstimator) ProbeSent() (int, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := int(e.d.Stats().PaddingBytes - e.baseBytes)
	return b / (rtpHeaderSize + paddingSize), b
}

func (e *probingEstimator) EndProbe() {
	e.mu.Lock()
	e.ended++
	e.active = 0
	e.mu.Unlock()
}

// allocatorRig is a live three-layer simulcast source, a bound down-track and an allocator over est.
func allocatorRig(t *testing.T, est Estimator, opts ...AllocatorOption) (*DownTrack, *Allocator, *fakeBinding, func()) {
	t.Helper()
	src, srcMu, recv, d := newSimulcastTrack()
	bind := &fakeBinding{rtx: true, record: true}
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.Start()
	var pr Prober
	if p, ok := est.(*probingEstimator); ok {
		p.d, pr = d, p
	}
	alloc, err := NewAllocator(DefaultAllocatorConfig(), est, pr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	alloc.Start()
	stop := liveSource(t, recv, src, srcMu)
	alloc.AddTrack(d, DefaultTrackOptions())
	return d, alloc, bind, func() { alloc.Close(); stop() }
}

// TestAllocatorSendsProbeClusters: the allocator pads out the estimator's probe clusters (its own,
// and the ones it asks for when its policy probes), everything sent meanwhile tagged: it begins
// the cluster, pads at least its size, and ends it.
func TestAllocatorSendsProbeClusters(t *testing.T) {
	est := &probingEstimator{queue: []cc.ProbeCluster{{ID: 7, Rate: cc.Mbps, MinPackets: 5, MinBytes: 3000}}}
	est.rate.Store(int64(30 * cc.Kbps)) // only the base layer fits: the policy probes for more
	d, _, _, stop := allocatorRig(t, est)
	defer stop()
	time.Sleep(2500 * time.Millisecond)
	est.mu.Lock()
	defer est.mu.Unlock()
	if len(est.begun) == 0 || est.begun[0] != 7 || est.ended == 0 || est.active != 0 {
		t.Fatalf("cluster 7: begun %v, ended %d, active %d: want begun, padded and ended", est.begun, est.ended, est.active)
	}
	if st := d.Stats(); st.PaddingBytes < 3000 {
		t.Fatalf("padding %d bytes, want at least the cluster's 3000", st.PaddingBytes)
	}
	if len(est.requested) == 0 {
		t.Fatal("the policy probed without asking the estimator for a cluster")
	}
	for _, r := range est.requested {
		if r <= 30*cc.Kbps {
			t.Fatalf("asked for a probe at %v, not above the estimate", r)
		}
	}
}

// TestAllocatorPausesAndResumesVideo: an estimate far below the base layer with loss on the path
// pauses the video after the policy's hold (nothing is forwarded, the subscriber is told once);
// when the estimate recovers the video resumes at a keyframe, its numbering continuous.
func TestAllocatorPausesAndResumesVideo(t *testing.T) {
	est := &fakeEstimator{}
	est.rate.Store(int64(10 * cc.Mbps))
	var mu sync.Mutex
	var slow []cc.Bitrate
	d, _, bind, stop := allocatorRig(t, est, WithSlowLink(func(e cc.Bitrate) {
		mu.Lock()
		slow = append(slow, e)
		mu.Unlock()
	}))
	defer stop()
	waitTarget := func(what string, within time.Duration, ok func(Layer) bool) {
		t.Helper()
		for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if ok(d.Target()) {
				return
			}
		}
		t.Fatalf("%s: target %v after %v", what, d.Target(), within)
	}
	waitTarget("top layer", 3*time.Second, func(l Layer) bool { return l == policy.TopLayer })
	est.rate.Store(int64(3 * cc.Kbps))
	est.loss.Store(300)
	waitTarget("paused", 4*time.Second, func(l Layer) bool { return l == policy.NoLayer })
	time.Sleep(100 * time.Millisecond)
	n := len(bind.sent())
	time.Sleep(300 * time.Millisecond)
	for _, p := range bind.sent()[n:] {
		if len(p.payload) > 0 && p.hdr.SSRC == 1111 {
			t.Fatalf("media forwarded while paused: seq %d", p.hdr.SequenceNumber)
		}
	}
	mu.Lock()
	if len(slow) != 1 || slow[0] > 10*cc.Kbps {
		t.Errorf("slow-link reports %v, want one, with the low estimate", slow)
	}
	mu.Unlock()
	est.rate.Store(int64(10 * cc.Mbps))
	est.loss.Store(0)
	waitTarget("resumed", 3*time.Second, func(l Layer) bool { return l.Spatial >= 0 })
	time.Sleep(500 * time.Millisecond)
	var fwd []sentPacket
	for _, p := range bind.sent() {
		if len(p.payload) > 0 && p.hdr.SSRC == 1111 {
			fwd = append(fwd, p)
		}
	}
	// Every packet the subscriber got, padding included, numbers on from the one before; the media
	// (padding left aside) has a keyframe at every change of layer, the resumption included.
	all := bind.sent()
	for i := 1; i < len(all); i++ {
		if all[i].hdr.SSRC == 1111 && all[i-1].hdr.SSRC == 1111 && all[i].hdr.SequenceNumber != all[i-1].hdr.SequenceNumber+1 {
			t.Fatalf("packet %d numbered %d after %d", i, all[i].hdr.SequenceNumber, all[i-1].hdr.SequenceNumber)
		}
	}
	resumed := false
	for i := 1; i < len(fwd); i++ {
		f, _ := media.ParseVP8(fwd[i].payload)
		if fwd[i].hdr.Timestamp-fwd[i-1].hdr.Timestamp > 90000/2 { // the pause
			resumed = true
			if !f.Keyframe || !f.Start {
				t.Fatalf("resumed with a delta frame (seq %d)", fwd[i].hdr.SequenceNumber)
			}
		}
	}
	if !resumed {
		t.Fatal("no pause found in the forwarded media")
	}
}

// TestSlowLinkIsRateLimited: one report per SlowLinkInterval at most.
func TestSlowLinkIsRateLimited(t *testing.T) {
	var got []time.Duration
	a, err := NewAllocator(DefaultAllocatorConfig(), nil, nil, WithSlowLink(func(cc.Bitrate) {}))
	if err != nil {
		t.Fatal(err)
	}
	a.slowLink = func(cc.Bitrate) { got = append(got, a.lastSlowLink) }
	for _, at := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 6 * time.Second, 11 * time.Second, 12 * time.Second} {
		a.reportSlowLink(at, cc.Mbps)
	}
	want := []time.Duration{time.Second, 6 * time.Second, 11 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("reports at %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reports at %v, want %v", got, want)
		}
	}
}

// TestAllocatorsDoNotPauseAServerWideStall: four subscribers of one server whose paths all
// collapse at the same moment (what a stall of the server looks like to their estimators) go down
// to the base layer, but their video is not paused; TestAllocatorPausesAndResumesVideo pauses the
// same collapse on one subscriber alone.
func TestAllocatorsDoNotPauseAServerWideStall(t *testing.T) {
	census := NewCensus()
	var tracks []*DownTrack
	var ests []*fakeEstimator
	for range censusMin {
		est := &fakeEstimator{}
		est.rate.Store(int64(10 * cc.Mbps))
		d, _, _, stop := allocatorRig(t, est, WithCensus(census))
		defer stop()
		tracks, ests = append(tracks, d), append(ests, est)
	}
	time.Sleep(1500 * time.Millisecond)
	for _, est := range ests {
		est.rate.Store(int64(3 * cc.Kbps))
		est.loss.Store(300)
	}
	base := false
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for i, d := range tracks {
			if l := d.Target(); l == policy.NoLayer {
				t.Fatalf("subscriber %d paused though all %d collapsed at once", i, len(tracks))
			}
		}
		base = base || tracks[0].Target().Spatial == 0
	}
	if !base {
		t.Errorf("the layers did not go down: target %v", tracks[0].Target())
	}
}
