package bwe

import (
	"testing"
	"time"
	"unsafe"
)

// The history is preallocated for every PeerConnection: keep its records small.
func TestSendHistoryRecordsStaySmall(t *testing.T) {
	if n := unsafe.Sizeof(sentRecord{}); n > 24 {
		t.Fatalf("sentRecord is %d bytes, want at most 24", n)
	}
	if n := unsafe.Sizeof(sendHistory{}); n > 100<<10 {
		t.Fatalf("sendHistory is %d bytes, want at most 100 KiB", n)
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
