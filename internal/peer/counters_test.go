package peer

import (
	"testing"
	"time"

	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/internal/rtcpview"
)

func marshalRTCP(t *testing.T, pkts ...rtcp.Packet) []byte {
	t.Helper()
	b, err := rtcp.Marshal(pkts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What a peer says about a stream strata sends is read from the raw RTCP: NACKed sequence
// numbers, PLIs, FIRs, and the reception report's loss, jitter and round-trip time.
func TestCountingInterceptorReadsFeedbackRaw(t *testing.T) {
	set := newCounterSet()
	c := set.stream(false, 1111, KindVideo)
	other := set.stream(false, 2222, KindVideo)
	i := &countingInterceptor{set: set}
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	// The SR the report refers to left 250 ms before now; the peer held it 50 ms: RTT 200 ms.
	lsr := rtcpview.CompactNTP(now.Add(-250 * time.Millisecond))
	dlsr := uint32(50 * 65536 / 1000)
	raw := marshalRTCP(t,
		&rtcp.ReceiverReport{SSRC: 9, Reports: []rtcp.ReceptionReport{
			{SSRC: 1111, TotalLost: 7, Jitter: 900, LastSenderReport: lsr, Delay: dlsr},
			{SSRC: 3333, TotalLost: 99}, // a stream strata does not send
		}},
		&rtcp.TransportLayerNack{SenderSSRC: 9, MediaSSRC: 1111, Nacks: []rtcp.NackPair{{PacketID: 10, LostPackets: 0b101}}},
		&rtcp.PictureLossIndication{SenderSSRC: 9, MediaSSRC: 1111},
		&rtcp.PictureLossIndication{SenderSSRC: 9, MediaSSRC: 2222},
		&rtcp.FullIntraRequest{SenderSSRC: 9, FIR: []rtcp.FIREntry{{SSRC: 2222, SequenceNumber: 1}}},
	)
	i.readRTCP(raw, now)
	if got := c.nacked.Load(); got != 3 {
		t.Errorf("nacked %d, want 3 (10, 11, 13)", got)
	}
	if c.plis.Load() != 1 || other.plis.Load() != 1 || other.firs.Load() != 1 || c.firs.Load() != 0 {
		t.Errorf("PLI/FIR counts: %d/%d and %d/%d", c.plis.Load(), c.firs.Load(), other.plis.Load(), other.firs.Load())
	}
	if !c.reported.Load() || c.reportLost.Load() != 7 || c.reportJit.Load() != 900 {
		t.Errorf("report: %v lost %d jitter %d", c.reported.Load(), c.reportLost.Load(), c.reportJit.Load())
	}
	if rtt := time.Duration(c.rttMicros.Load()) * time.Microsecond; rtt < 199*time.Millisecond || rtt > 201*time.Millisecond {
		t.Errorf("RTT %v, want 200 ms", rtt)
	}
	var st StreamStats
	addOutbound(&st, c, 90000)
	if st.Lost != 7 || st.JitterMs != 10 || st.NACKs != 3 || st.PLIs != 1 || st.RTTMs < 199 || st.RTTMs > 201 {
		t.Errorf("stats %+v", st)
	}
	// Malformed RTCP after a good packet: the good one counts, nothing panics.
	i.readRTCP(append(marshalRTCP(t, &rtcp.PictureLossIndication{MediaSSRC: 1111}), 0x80, 0xc9, 0xff, 0xff), now)
	if c.plis.Load() != 2 {
		t.Errorf("PLI before malformed bytes not counted")
	}
}

func FuzzCountingInterceptorRTCP(f *testing.F) {
	f.Add([]byte{0x81, 0xc9, 0x00, 0x07, 0, 0, 0, 1, 0, 0, 4, 87, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 3, 132, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x81, 0xcd, 0x00, 0x03, 0, 0, 0, 9, 0, 0, 4, 87, 0, 10, 0, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		set := newCounterSet()
		set.stream(false, 1111, KindVideo)
		(&countingInterceptor{set: set}).readRTCP(b, time.Now())
	})
}
