package relay

import (
	"sync"
	"time"
)

// lossTracker finds the packets of one layer that the link lost, for the edge's NACKs: a gap in
// the sequence numbers is missing until the packet arrives (late or retransmitted), is given up
// after maxNACKs requests, or is older than maxLossAge (no subscriber plays it that late, and the
// origin's cache answers only about a second back). Time is passed in; nothing allocates.
type lossTracker struct {
	mu      sync.Mutex
	started bool
	highest uint16
	missing [maxMissing]missingPacket
	n       int
}

type missingPacket struct {
	seq     uint16
	asked   uint8
	since   time.Duration // when the gap was seen
	askedAt time.Duration
}

const (
	// maxMissing bounds the packets tracked at once; a larger gap (a link outage) is not asked
	// for packet by packet: the edge's subscribers recover with a keyframe.
	maxMissing = 256
	maxNACKs   = 3
	maxLossAge = time.Second
	// reorderWait: a gap is asked for only after this long (a packet merely reordered on the
	// link arrives within it).
	reorderWait = 5 * time.Millisecond
)

// received records that seq arrived.
func (t *lossTracker) received(seq uint16, now time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		t.started, t.highest = true, seq
		return
	}
	d := int16(seq - t.highest)
	switch {
	case d > 0:
		if int(d) > maxMissing {
			t.n = 0
		} else {
			for s := t.highest + 1; s != seq; s++ {
				t.add(s, now)
			}
		}
		t.highest = seq
	case d < 0:
		t.remove(seq)
	}
}

func (t *lossTracker) add(seq uint16, now time.Duration) {
	if t.n == maxMissing {
		copy(t.missing[:], t.missing[1:])
		t.n--
	}
	t.missing[t.n] = missingPacket{seq: seq, since: now}
	t.n++
}

func (t *lossTracker) remove(seq uint16) {
	for i := 0; i < t.n; i++ {
		if t.missing[i].seq == seq {
			copy(t.missing[i:], t.missing[i+1:t.n])
			t.n--
			return
		}
	}
}

// due appends to out the packets to ask for now (each again after retry), and forgets those given
// up.
func (t *lossTracker) due(now, retry time.Duration, out []uint16) []uint16 {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := 0
	for i := 0; i < t.n; i++ {
		m := t.missing[i]
		if now-m.since > maxLossAge || m.asked >= maxNACKs && now-m.askedAt >= retry {
			continue
		}
		if m.asked == 0 && now-m.since >= reorderWait || m.asked > 0 && m.asked < maxNACKs && now-m.askedAt >= retry {
			m.asked++
			m.askedAt = now
			out = append(out, m.seq)
		}
		t.missing[kept] = m
		kept++
	}
	t.n = kept
	return out
}
