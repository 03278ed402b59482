package bwe

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// queueTrend watches the one-way delay of the packets transport feedback reports received, for a
// congestion signal faster than GCC's. When a path is cut below what is sent, the bottleneck queue
// grows by (sent − capacity)/capacity seconds per second, but little gets through it: at 250 kbit/s
// two or three packets per feedback message. GCC's trendline smooths the delay of packet groups over
// twenty groups and needs the slope above an adaptive threshold for a while, so on such a path it
// flags over-use only after 300–500 ms (measured in the videoroom's cut test); and once a drop-tail
// queue is full it stops growing, the trendline sees nothing, and only the loss controller acts,
// once per second. Meanwhile the subscriber got its video through a full queue, late and broken.
//
// The path is overloaded when more is sent than arrives — the rate sent over the last 500 ms (every
// packet, lost ones included) is at least 1.2 × the rate at which the latest packets arrived (at
// least 150 ms and three packets' worth of arrivals) — and the queue shows it, in one of two ways:
//
//   - it grows: over the last window of send time (250 ms), the smallest delay among the packets
//     sent in its last 60 ms exceeds the smallest among those sent in its first 60 ms by at least
//     30 ms. Minima ignore a burst's own spread (a keyframe sent at once delays its own last
//     packets, not the first);
//   - it is full: that smallest recent delay is at least 50 ms above the smallest delay of the last
//     ten seconds (the path's base delay).
//
// Either must show in two feedback messages in a row, or a growing queue in one when at least twice
// as much is sent as arrives. The rate test keeps out what is not overload: a keyframe queueing
// behind itself on a path with room on average, a buffer holding a standing queue while the sender
// stays within the path's rate, random loss on a path with no queue (the sent/arrived ratio is
// there, the queue is not), a receiver's hiccup (its packets arrive in a burst, fast).
type queueTrend struct {
	samples [queueSamples]delaySample
	next, n int
	reports int // feedback messages in a row showing overload

	sent        [sentBuckets]int // bytes sent per sentBucket, a ring
	sentHead    int
	sentHeadAt  time.Duration
	sentStarted bool

	baseMin    [baseBuckets]time.Duration // smallest delay per baseBucket of arrival time, a ring
	baseSet    [baseBuckets]bool
	baseHead   int
	baseHeadAt time.Duration
	baseSeen   bool

	growth, standing time.Duration
	delivered        cc.Bitrate
	sentRate         cc.Bitrate
	overload         bool
	evaluatedAt      time.Duration // the sender's clock at the last verdict

	losses    [lossReports]lossReport // per feedback message, a ring
	lossNext  int
	lossCount int
}

// lossReport is what one feedback message said: how many packets it reported, how many lost.
type lossReport struct {
	at          time.Duration
	lost, total int
}

type delaySample struct {
	send, arrival time.Duration
	size          int
}

const (
	queueSamples     = 512
	queueWindow      = 250 * time.Millisecond
	queueEdge        = 60 * time.Millisecond
	queueGrowthMin   = 30 * time.Millisecond
	queueStandingMin = 50 * time.Millisecond
	queueReports     = 2
	deliveredWindow  = 150 * time.Millisecond
	deliveredMax     = time.Second
	sentBucket       = 50 * time.Millisecond
	sentBuckets      = 10
	baseBucket       = time.Second
	baseBuckets      = 10
	lossReports      = 32
	lossWindow       = 500 * time.Millisecond
	lossMinPackets   = 10
	// lossSentWithin: a loss reported for a packet sent longer ago than this is not about now (a
	// full queue holds 200-500 ms, feedback takes another RTT; a probe is followed by the next
	// no sooner than 800 ms after it failed).
	lossSentWithin   = 750 * time.Millisecond
	overSentRatio    = 1.2
	farOverSentRatio = 2
)

// onSent counts a packet leaving at now (called per packet: no allocation, a few operations).
func (q *queueTrend) onSent(now time.Duration, size int) {
	q.advanceSent(now)
	q.sent[q.sentHead] += size
}

// advanceSent rotates the sent-bytes ring so that its head bucket covers now.
func (q *queueTrend) advanceSent(now time.Duration) {
	if !q.sentStarted {
		q.sentStarted, q.sentHeadAt = true, now
		return
	}
	for n := 0; now-q.sentHeadAt >= sentBucket && n <= sentBuckets; n++ {
		q.sentHead = (q.sentHead + 1) % sentBuckets
		q.sent[q.sentHead] = 0
		q.sentHeadAt += sentBucket
	}
	if now-q.sentHeadAt >= sentBucket { // a long silence
		q.sentHeadAt = now
	}
}

// sentOver is the rate sent over the last sentBuckets buckets before now.
func (q *queueTrend) sentOver(now time.Duration) cc.Bitrate {
	if !q.sentStarted {
		return 0
	}
	q.advanceSent(now)
	bytes := 0
	for _, b := range q.sent {
		bytes += b
	}
	return cc.BitrateOf(bytes, sentBucket*(sentBuckets-1)+max(now-q.sentHeadAt, time.Millisecond))
}

// noteBase folds a delay into the ten-second minimum, bucketed by arrival time.
func (q *queueTrend) noteBase(arrival, delay time.Duration) {
	if !q.baseSeen {
		q.baseSeen, q.baseHeadAt = true, arrival
	}
	for n := 0; arrival-q.baseHeadAt >= baseBucket && n <= baseBuckets; n++ {
		q.baseHead = (q.baseHead + 1) % baseBuckets
		q.baseSet[q.baseHead] = false
		q.baseHeadAt += baseBucket
	}
	if arrival-q.baseHeadAt >= baseBucket {
		q.baseHeadAt = arrival
	}
	if !q.baseSet[q.baseHead] || delay < q.baseMin[q.baseHead] {
		q.baseMin[q.baseHead], q.baseSet[q.baseHead] = delay, true
	}
}

func (q *queueTrend) base() (time.Duration, bool) {
	var m time.Duration
	ok := false
	for i, set := range q.baseSet {
		if set && (!ok || q.baseMin[i] < m) {
			m, ok = q.baseMin[i], true
		}
	}
	return m, ok
}

// onFeedback folds in one feedback message's results (received ones), arrived at now (the sender's
// clock), and re-evaluates.
func (q *queueTrend) onFeedback(now time.Duration, results []cc.PacketResult) {
	// Only packets sent within lossSentWithin count: a receiver that got nothing for a while (video
	// paused, a dead link) reports the packets it missed meanwhile in its next feedback, and the
	// losses of a probe sent seconds ago say nothing about the path now.
	lost, total := 0, 0
	for i := range results {
		if now-results[i].SendTime > lossSentWithin {
			continue
		}
		total++
		if results[i].Lost {
			lost++
		}
	}
	q.losses[q.lossNext] = lossReport{at: now, lost: lost, total: total}
	q.lossNext = (q.lossNext + 1) % lossReports
	q.lossCount = min(q.lossCount+1, lossReports)
	added := false
	for i := range results {
		r := &results[i]
		if r.Lost {
			continue
		}
		q.samples[q.next] = delaySample{send: r.SendTime, arrival: r.Arrival, size: r.Size}
		q.next = (q.next + 1) % queueSamples
		q.n = min(q.n+1, queueSamples)
		q.noteBase(r.Arrival, r.Arrival-r.SendTime)
		added = true
	}
	if !added {
		return // nothing new arrived: keep the last verdict
	}
	q.sentRate = q.sentOver(now)
	q.evaluate()
	q.evaluatedAt = now
}

// at returns the k-th newest sample (k = 0 is the newest).
func (q *queueTrend) at(k int) *delaySample {
	return &q.samples[(q.next-1-k+2*queueSamples)%queueSamples]
}

func (q *queueTrend) evaluate() {
	newest := q.at(0).send
	for k := 1; k < q.n; k++ {
		newest = max(newest, q.at(k).send)
	}
	// The window: samples sent within queueWindow of the newest.
	first, count := newest, 0
	for k := 0; k < q.n; k++ {
		if s := q.at(k); newest-s.send <= queueWindow {
			first = min(first, s.send)
			count++
		}
	}
	q.growth, q.standing = 0, 0
	early, late, hasEarly, hasLate := q.edges(first, newest)
	if hasLate {
		if base, ok := q.base(); ok {
			q.standing = late - base
		}
	}
	if hasEarly && hasLate && count >= 3 && newest-first >= 2*queueEdge {
		q.growth = late - early
	}
	q.delivered = q.deliveredRate()
	ratio := 0.0
	if q.delivered > 0 {
		ratio = float64(q.sentRate) / float64(q.delivered)
	}
	growing := q.growth >= queueGrowthMin
	if ratio >= overSentRatio && (growing || q.standing >= queueStandingMin) {
		q.reports++
	} else {
		q.reports = 0
	}
	q.overload = q.reports >= queueReports || (q.reports > 0 && growing && ratio >= farOverSentRatio)
}

// edges returns the smallest delay among the packets sent in the first and in the last queueEdge
// of [first, newest].
func (q *queueTrend) edges(first, newest time.Duration) (early, late time.Duration, hasEarly, hasLate bool) {
	for k := 0; k < q.n; k++ {
		s := q.at(k)
		if s.send < first || s.send > newest {
			continue
		}
		d := s.arrival - s.send
		if s.send <= first+queueEdge && (!hasEarly || d < early) {
			early, hasEarly = d, true
		}
		if s.send >= newest-queueEdge && (!hasLate || d < late) {
			late, hasLate = d, true
		}
	}
	return early, late, hasEarly, hasLate
}

// deliveredRate is the rate at which the latest packets arrived: the newest ones (in feedback
// order) spanning at least deliveredWindow of arrival time and counting at least three, but none
// older than deliveredMax (a path cut to a few packets a second still gets a rate); 0 when unknown.
func (q *queueTrend) deliveredRate() cc.Bitrate {
	if q.n < 2 {
		return 0
	}
	lastArr := q.at(0).arrival
	firstArr, firstSize := lastArr, q.at(0).size
	bytes, n := firstSize, 1
	for k := 1; k < q.n; k++ {
		s := q.at(k)
		if lastArr-s.arrival > deliveredMax {
			break
		}
		if s.arrival > lastArr {
			continue // reordered past the newest: skip
		}
		bytes += s.size
		n++
		if s.arrival < firstArr {
			firstArr, firstSize = s.arrival, s.size
		}
		if n >= 3 && lastArr-firstArr >= deliveredWindow {
			break
		}
	}
	if span := lastArr - firstArr; n >= 2 && span > 0 {
		return cc.BitrateOf(bytes-firstSize, span)
	}
	return 0
}

// recentLoss is the fraction of the packets reported lost by the feedback messages of the last
// lossWindow before now; ok is false with fewer than lossMinPackets reported. Unlike GCC's loss
// fraction (once a second) and its short-window one (every 20 packets, however long ago), it is
// about now: a probe sent after a cut must not fail on the cut's losses.
func (q *queueTrend) recentLoss(now time.Duration) (float64, bool) {
	lost, total := 0, 0
	for k := 0; k < q.lossCount; k++ {
		r := &q.losses[(q.lossNext-1-k+2*lossReports)%lossReports]
		if now-r.at > lossWindow {
			break
		}
		lost += r.lost
		total += r.total
	}
	if total < lossMinPackets {
		return 0, false
	}
	return float64(lost) / float64(total), true
}
