package bwe

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// dropTail is a bottleneck whose rate can change: packets queue behind each other and are dropped
// when they would wait more than maxQueue, then travel 20 ms.
type dropTail struct {
	rate     func(now time.Duration) cc.Bitrate
	maxQueue time.Duration
	free     time.Duration
}

func (l *dropTail) send(now time.Duration, size int) (arrival time.Duration, lost bool) {
	start := max(now, l.free)
	if start-now > l.maxQueue {
		return 0, true
	}
	l.free = start + l.rate(now).TimeFor(size)
	return l.free + 20*time.Millisecond, false
}

// videoFrames sends frames of frameBytes at 30 fps in 1200-byte packets, back to back, with a
// keyframe of keyBytes every keyEvery frames, over link, delivering feedback every 100 ms to q; it
// returns when q first reported overload (or -1).
func videoFrames(q *queueTrend, link *dropTail, d time.Duration, frameBytes, keyBytes, keyEvery int) time.Duration {
	var pending []cc.PacketResult
	frame := 0
	seq := int64(0)
	nextFeedback := 100 * time.Millisecond
	for now := time.Duration(0); now < d; now += time.Millisecond {
		if now%(33*time.Millisecond) == 0 {
			bytes := frameBytes
			if keyEvery > 0 && frame%keyEvery == 0 {
				bytes = keyBytes
			}
			for bytes > 0 {
				size := min(bytes, 1200)
				q.onSent(now, size)
				arrival, lost := link.send(now, size)
				pending = append(pending, cc.PacketResult{SeqNo: seq, SendTime: now, Size: size, Arrival: arrival, Lost: lost})
				seq++
				bytes -= size
			}
			frame++
		}
		if now == nextFeedback {
			// Feedback reports every packet up to the newest that has arrived.
			last := -1
			for i, p := range pending {
				if !p.Lost && p.Arrival <= now {
					last = i
				}
			}
			q.onFeedback(now, pending[:last+1])
			pending = append(pending[:0], pending[last+1:]...)
			nextFeedback += 100 * time.Millisecond
			if q.overload {
				return now
			}
		}
	}
	return -1
}

// TestQueueTrendSeesACutLinkAtOnce: a path carrying 800 kbit/s of video is cut to 250 kbit/s
// behind a 200 ms drop-tail queue (the videoroom's cut test). The queue grows at 2.2 s per second
// but only two or three packets a feedback message get through; the trend must call it overload
// within 300 ms.
func TestQueueTrendSeesACutLinkAtOnce(t *testing.T) {
	cut := 3 * time.Second
	link := &dropTail{maxQueue: 200 * time.Millisecond, rate: func(now time.Duration) cc.Bitrate {
		if now >= cut {
			return 250 * cc.Kbps
		}
		return 5 * cc.Mbps
	}}
	var q queueTrend
	at := videoFrames(&q, link, 6*time.Second, 3000, 12000, 30)
	if at < 0 {
		t.Fatal("no overload after the cut")
	}
	if at < cut {
		t.Fatalf("overload at %v, before the cut", at)
	}
	if at-cut > 300*time.Millisecond {
		t.Errorf("overload %v after the cut, want within 300 ms", at-cut)
	}
	t.Logf("overload %v after the cut; queue growth %v, delivered %v", at-cut, q.growth, q.delivered)
	if q.delivered < 150*cc.Kbps || q.delivered > 400*cc.Kbps {
		t.Errorf("delivered rate %v, want about the 250 kbit/s link", q.delivered)
	}
}

// TestQueueTrendIgnoresKeyframesAndStandingQueues: keyframes sent at once on a link that carries
// the average rate with little room delay their own packets by up to 200 ms, and a buffer can hold
// a standing queue; neither is a queue that keeps growing.
func TestQueueTrendIgnoresKeyframesAndStandingQueues(t *testing.T) {
	// 30 kB keyframes every second (240 ms at 1 Mbit/s) over 600 kbit/s of frames.
	link := &dropTail{maxQueue: time.Second, rate: func(time.Duration) cc.Bitrate { return cc.Mbps }}
	var q queueTrend
	if at := videoFrames(&q, link, 20*time.Second, 2500, 30000, 30); at >= 0 {
		t.Errorf("keyframe bursts taken for overload at %v (growth %v)", at, q.growth)
	}
	// A link exactly at the sending rate after a burst filled its queue: the queue stands.
	var sq queueTrend
	var pending []cc.PacketResult
	for i := 0; i < 2000; i++ {
		send := time.Duration(i) * 10 * time.Millisecond
		sq.onSent(send, 1200)
		pending = append(pending, cc.PacketResult{SeqNo: int64(i), SendTime: send, Size: 1200, Arrival: send + 150*time.Millisecond})
		if i%10 == 9 {
			sq.onFeedback(send+160*time.Millisecond, pending)
			pending = pending[:0]
			if sq.overload {
				t.Fatalf("a standing 150 ms queue taken for overload at packet %d", i)
			}
		}
	}
}

// TestQueueTrendIgnoresAHiccup: the receiver (or a Wi-Fi link scanning channels) holds packets
// for 150 ms and then delivers them in a burst. The delay jumped, but what arrives arrives fast:
// not overload, then or after.
func TestQueueTrendIgnoresAHiccup(t *testing.T) {
	var q queueTrend
	report := func(from int, arrival func(i int, send time.Duration) time.Duration) {
		var batch []cc.PacketResult
		for i := from; i < from+10; i++ {
			send := time.Duration(i) * 10 * time.Millisecond
			q.onSent(send, 1200)
			batch = append(batch, cc.PacketResult{SeqNo: int64(i), SendTime: send, Size: 1200, Arrival: arrival(i, send)})
		}
		q.onFeedback(time.Duration(from+10)*10*time.Millisecond+100*time.Millisecond, batch)
		if q.overload {
			t.Fatalf("overload after the report from packet %d (growth %v, sent %v, delivered %v)", from, q.growth, q.sentRate, q.delivered)
		}
	}
	normal := func(_ int, send time.Duration) time.Duration { return send + 20*time.Millisecond }
	for k := 0; k < 10; k++ {
		report(10*k, normal)
	}
	report(100, func(i int, _ time.Duration) time.Duration { // held until 1.15 s, then a burst
		return 1150*time.Millisecond + time.Duration(i-100)*100*time.Microsecond
	})
	if q.growth < queueGrowthMin {
		t.Fatalf("growth %v after the hiccup: the test does not exercise the delay test", q.growth)
	}
	for k := 11; k < 20; k++ {
		report(10*k, normal)
	}
}

// TestQueueTrendSeesAFullQueue: long after a cut, the drop-tail queue is full and no longer grows;
// what is sent still far exceeds what arrives: overload. Random loss on a path without a queue
// (the same sent/arrived ratio) is not.
func TestQueueTrendSeesAFullQueue(t *testing.T) {
	run := func(link func(now time.Duration, size int) (time.Duration, bool)) (overloadAfter time.Duration, q *queueTrend) {
		q = &queueTrend{}
		var pending []cc.PacketResult
		seq := int64(0)
		overloadAfter = -1
		for now := time.Duration(0); now < 8*time.Second; now += 4 * time.Millisecond { // 2.4 Mbit/s of 1200-byte packets
			q.onSent(now, 1200)
			arrival, lost := link(now, 1200)
			pending = append(pending, cc.PacketResult{SeqNo: seq, SendTime: now, Size: 1200, Arrival: arrival, Lost: lost})
			seq++
			if now%(100*time.Millisecond) == 0 {
				last := -1
				for i, p := range pending {
					if !p.Lost && p.Arrival <= now {
						last = i
					}
				}
				q.onFeedback(now, pending[:last+1])
				pending = append(pending[:0], pending[last+1:]...)
				if now >= 6*time.Second && q.overload && overloadAfter < 0 {
					overloadAfter = now
				}
			}
		}
		return overloadAfter, q
	}
	// 2.4 Mbit/s into 300 kbit/s from 3 s on: by 6 s the 200 ms queue has long been full.
	tail := &dropTail{maxQueue: 200 * time.Millisecond, rate: func(now time.Duration) cc.Bitrate {
		if now >= 3*time.Second {
			return 300 * cc.Kbps
		}
		return 10 * cc.Mbps
	}}
	if at, q := run(tail.send); at < 0 || at > 6300*time.Millisecond {
		t.Errorf("full queue: overload at %v (standing %v, growth %v, sent %v, delivered %v)", at, q.standing, q.growth, q.sentRate, q.delivered)
	}
	rng := uint32(1)
	random := func(now time.Duration, _ int) (time.Duration, bool) {
		rng = rng*1664525 + 1013904223
		return now + 20*time.Millisecond, rng>>24 < 77 // about 30 % lost
	}
	if at, q := run(random); at >= 0 {
		t.Errorf("random loss without a queue taken for overload (standing %v, growth %v, sent %v, delivered %v)", q.standing, q.growth, q.sentRate, q.delivered)
	}
}

// TestRecentLossIsAboutPacketsSentRecently: after a silence (video paused, nothing sent), the first
// feedback reports the packets the receiver missed before it, sent seconds ago; the loss of the
// packets sent now must not include them, or a probe after a cut fails on the cut's losses.
func TestRecentLossIsAboutPacketsSentRecently(t *testing.T) {
	var q queueTrend
	var results []cc.PacketResult
	for i := range 20 { // a probe lost on a dead link, 2 s ago
		results = append(results, cc.PacketResult{SeqNo: int64(i), SendTime: 8*time.Second + time.Duration(i)*time.Millisecond, Size: 300, Lost: true})
	}
	now := 10 * time.Second
	for i := range 20 { // today's probe, all delivered
		send := now - 100*time.Millisecond + time.Duration(i)*time.Millisecond
		results = append(results, cc.PacketResult{SeqNo: int64(20 + i), SendTime: send, Arrival: send + 20*time.Millisecond, Size: 300})
	}
	q.onFeedback(now, results)
	if loss, ok := q.recentLoss(now); !ok || loss != 0 {
		t.Errorf("recent loss %v (ok %v), want 0: the lost packets were sent 2 s ago", loss, ok)
	}
	results = results[:0]
	for i := range 20 {
		send := now + time.Duration(i)*time.Millisecond
		results = append(results, cc.PacketResult{SeqNo: int64(40 + i), SendTime: send, Arrival: send + 20*time.Millisecond, Size: 300, Lost: i%2 == 0})
	}
	q.onFeedback(now+100*time.Millisecond, results)
	if loss, ok := q.recentLoss(now + 100*time.Millisecond); !ok || loss < 0.2 {
		t.Errorf("recent loss %v (ok %v), want a quarter: half of the newest packets were lost", loss, ok)
	}
}
