package bwe

import (
	"testing"
	"time"
	"unsafe"
)

// Every PeerConnection has a history: keep its records small and its first allocation smaller.
func TestSendHistoryRecordsStaySmall(t *testing.T) {
	if n := unsafe.Sizeof(sentRecord{}); n > 24 {
		t.Fatalf("sentRecord is %d bytes, want at most 24", n)
	}
	if n := uintptr(historyMinSlots) * unsafe.Sizeof(sentRecord{}); n > 8<<10 {
		t.Fatalf("a new history is %d bytes, want at most 8 KiB", n)
	}
	if n := uintptr(historySize) * unsafe.Sizeof(sentRecord{}); n > 100<<10 {
		t.Fatalf("a full history is %d bytes, want at most 100 KiB", n)
	}
}

// TestSendHistorySizeFollowsThePacketRate: the history grows to hold historyHorizon of packets at
// the rate they are sent, and no further: an audio-only PeerConnection keeps the smallest ring, a
// video subscriber a ring for its rate, the fastest sender the largest ring.
func TestSendHistorySizeFollowsThePacketRate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perSecond int
		want      int
	}{
		{"audio 50/s", 50, historyMinSlots},
		{"video 1.2 Mbit/s with audio, 160/s", 160, historyMinSlots},
		{"19 audio streams, 950/s", 950, 1024},
		{"video 4 Mbit/s, 400/s", 400, 512},
		{"15 Mbit/s, 1500/s", 1500, 2048},
		{"60 Mbit/s, 6000/s", 6000, historySize},
	} {
		h := newSendHistory()
		gap := time.Second / time.Duration(tc.perSecond)
		n := int64(10 * tc.perSecond) // 10 s
		for i := range n {
			h.add(i, time.Duration(i)*gap, 1200, 0)
		}
		if h.slots.Len() != tc.want {
			t.Errorf("%s: %d slots, want %d", tc.name, h.slots.Len(), tc.want)
		}
		// Whatever was sent within the horizon (or the last historySize packets) is still there.
		keep := min(n, int64(historyHorizon/gap), historySize)
		for i := n - keep; i < n; i++ {
			if r, ok := h.get(i); !ok || r.sendTime != time.Duration(i)*gap {
				t.Fatalf("%s: packet %d of %d sent within the horizon is gone", tc.name, i, n)
			}
		}
	}
}

// TestSendHistoryKeepsRecordsWhenItGrows: packets recorded before a doubling are still found, and
// matched to their own record, after it.
func TestSendHistoryKeepsRecordsWhenItGrows(t *testing.T) {
	h := newSendHistory()
	for i := range int64(historyMinSlots) {
		h.add(i+70000, time.Duration(i)*time.Millisecond, int(i), int(i%3))
	}
	h.add(70000+historyMinSlots, historyMinSlots*time.Millisecond, 1, 0) // would overwrite a young packet
	if h.slots.Len() != 2*historyMinSlots {
		t.Fatalf("%d slots after a collision with a young packet, want %d", h.slots.Len(), 2*historyMinSlots)
	}
	for i := range int64(historyMinSlots) {
		r, ok := h.get(i + 70000)
		if !ok || r.size != uint16(i) || r.cluster != int32(i%3) || r.sendTime != time.Duration(i)*time.Millisecond {
			t.Fatalf("packet %d after the doubling: %+v, %v", i+70000, r, ok)
		}
	}
}

// TestSendHistoryRecordsWithoutAllocating: once grown to the rate, recording allocates nothing.
func TestSendHistoryRecordsWithoutAllocating(t *testing.T) {
	h := newSendHistory()
	var seq int64
	send := func() {
		h.add(seq, time.Duration(seq)*time.Millisecond, 1200, 0)
		seq++
	}
	for range 5000 {
		send()
	}
	if a := testing.AllocsPerRun(1000, send); a != 0 {
		t.Fatalf("%v allocations per packet recorded", a)
	}
}

func TestSendHistoryForgetsOverwrittenPackets(t *testing.T) {
	h := newSendHistory()
	if _, ok := h.get(0); ok {
		t.Fatal("an empty history holds seq 0")
	}
	h.add(5, time.Millisecond, 1200, 3)
	r, ok := h.get(5)
	if !ok || r.sendTime != time.Millisecond || r.size != 1200 || r.cluster != 3 {
		t.Fatalf("get(5) = %+v, %v", r, ok)
	}
	h.add(5+historySize, 2*time.Millisecond, 100000, 0) // same slot, a later packet; size saturates
	if _, ok := h.get(5); ok {
		t.Fatal("an overwritten packet is still found")
	}
	if r, ok := h.get(5 + historySize); !ok || r.size != 0xffff {
		t.Fatalf("get(5+historySize) = %+v, %v", r, ok)
	}
	out := h.appendResult(nil, 5, time.Second, false)
	if len(out) != 0 {
		t.Fatal("feedback for an overwritten packet was matched")
	}
}
