package rtcpview

import (
	"testing"
	"time"
)

func TestReportBlockRTT(t *testing.T) {
	srSent := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	held := 30 * time.Millisecond
	b := ReportBlock{LastSR: CompactNTP(srSent), DelaySinceLSR: uint32(held * 65536 / time.Second)}
	rtt, ok := b.RTT(srSent.Add(held + 80*time.Millisecond))
	if !ok || rtt < 79*time.Millisecond || rtt > 81*time.Millisecond {
		t.Fatalf("rtt = %v %v, want 80ms", rtt, ok)
	}
	if _, ok := (ReportBlock{}).RTT(srSent); ok {
		t.Fatal("a report without LSR gave an RTT")
	}
	if _, ok := b.RTT(srSent); ok {
		t.Fatal("a report from the future gave an RTT")
	}
	if _, ok := b.RTT(srSent.Add(2 * time.Minute)); ok {
		t.Fatal("an RTT of two minutes was taken as plausible")
	}
}
