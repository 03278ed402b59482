package lowprio

import (
	"testing"
	"time"
)

// The meter sees a path whose delay rises from its base by a queue and falls back, with the two
// clocks far apart and the sender's 32-bit microsecond timestamps wrapping in the middle.
func TestQueueMeterFollowsQueue(t *testing.T) {
	var q QueueMeter
	if q.Delay() != 0 {
		t.Fatalf("empty meter: %v", q.Delay())
	}
	const offset = 5000 * time.Second // the sender's clock is far ahead of the receiver's
	wrap := time.Duration(1<<32) * time.Microsecond
	sendAt := 2*wrap - 2*time.Second // the sender's timestamps wrap after two seconds
	base := 30 * time.Millisecond
	queue := []time.Duration{0, 0, 10, 40, 80, 80, 80, 80, 60, 20, 5, 5, 5, 5}
	var buf [64]byte
	for i, qd := range queue {
		send := sendAt + time.Duration(i)*300*time.Millisecond
		msg, err := EncodeData(buf[:], 1, uint32(i), ts(send), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		q.Observe(send-offset+base+qd*time.Millisecond, msg)
		got := q.Delay()
		// The estimate is the minimum of the last four samples' queues.
		want := qd * time.Millisecond
		for j := max(0, i-3); j < i; j++ {
			want = min(want, queue[j]*time.Millisecond)
		}
		if got != want {
			t.Errorf("message %d (queue %v ms): estimate %v, want %v", i, qd, got, want)
		}
	}
	// Messages that are not DATA, or not messages, change nothing.
	before := q.Delay()
	ack, _ := EncodeAck(buf[:], &Message{Transfer: 1})
	q.Observe(time.Hour, ack)
	q.Observe(time.Hour, []byte{0x11, 0})
	if q.Delay() != before {
		t.Errorf("an ACK or a short message moved the estimate: %v → %v", before, q.Delay())
	}
}
