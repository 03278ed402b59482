package bwe

import (
	"testing"
	"time"

	"github.com/pion/rtcp"
)

func TestRTTFromReport(t *testing.T) {
	srSent := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	held := 30 * time.Millisecond
	report := rtcp.ReceptionReport{
		LastSenderReport: ntpMiddle32(srSent),
		Delay:            uint32(held * 65536 / time.Second),
	}
	rtt, ok := rttFromReport(srSent.Add(held+80*time.Millisecond), report)
	if !ok || rtt < 79*time.Millisecond || rtt > 81*time.Millisecond {
		t.Fatalf("rtt = %v %v, want 80ms", rtt, ok)
	}
	if _, ok := rttFromReport(srSent, rtcp.ReceptionReport{}); ok {
		t.Fatal("a report without LSR gave an RTT")
	}
	if _, ok := rttFromReport(srSent, report); ok {
		t.Fatal("a report from the future gave an RTT")
	}
}
