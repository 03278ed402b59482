package client

import (
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

const (
	testTWCCID  = 5
	testSSRC    = 0x11223344
	testTagSize = 16 // AEAD_AES_128_GCM's tag
)

// srtpLike builds what a light receiver reads off the socket: a clear RTP header with the
// transport-wide sequence number and a payload plus tag it cannot read.
func srtpLike(t testing.TB, seq, twseq uint16, ts uint32, marker bool, payload int) []byte {
	t.Helper()
	h := rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: ts, SSRC: testSSRC, Marker: marker}
	if err := h.SetExtension(testTWCCID, []byte{byte(twseq >> 8), byte(twseq)}); err != nil {
		t.Fatal(err)
	}
	b, err := h.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(b, make([]byte, payload+testTagSize)...)
}

// lightStream is a video stream the tap counts (as after its first keyframe came through Pion).
func lightStream(tp *tap) *Stream {
	st := &Stream{Mid: "0", Kind: "video", stats: rtpstats.New(rtpstats.Config{Kind: rtpstats.Video, ClockRate: 90000}, 0),
		light: lightState{overhead: testTagSize, counting: true}}
	tp.register(testSSRC, st)
	return st
}

func newTestTap(clock *time.Duration) *tap {
	tp := newTap(func() time.Duration { return *clock }, 0xabcdef)
	tp.setTWCC(testTWCCID)
	return tp
}

// TestTapCountsGapsAndNACKs: packets counted at the socket give the same bytes as the clear RTP
// packets, a gap is loss, and the missing sequence numbers are NACKed (each at most nackTries
// times) unless they arrive.
func TestTapCountsGapsAndNACKs(t *testing.T) {
	var clock time.Duration
	tp := newTestTap(&clock)
	st := lightStream(tp)
	kept := 0
	for seq := uint16(100); seq < 200; seq++ {
		if seq >= 150 && seq < 153 { // lost
			continue
		}
		clock += 10 * time.Millisecond
		if tp.swallow(srtpLike(t, seq, seq, uint32(seq)*3000, true, 1000)) {
			kept++
		}
	}
	c := st.Counters()
	if c.Packets != 97 || c.Lost != 3 || c.Expected != 100 {
		t.Fatalf("counters %+v, want 97 packets, 3 lost of 100", c)
	}
	hdr := len(srtpLike(t, 0, 0, 0, true, 0)) - testTagSize
	if c.Bytes != uint64(97*(hdr+1000)) {
		t.Errorf("%d bytes, want %d (the RTP packets, without the SRTP tag)", c.Bytes, 97*(hdr+1000))
	}
	if kept == 0 || kept >= 97 || tp.swallowed.Load() != uint64(kept) {
		t.Errorf("kept %d of 97 (swallowed %d): some must go to Pion as samples", kept, tp.swallowed.Load())
	}
	// A late arrival is no longer missing.
	tp.swallow(srtpLike(t, 151, 300, 151*3000, true, 1000))
	for try := 0; try < nackTries+1; try++ {
		clock += feedbackInterval
		got := st.nack(clock, nil)
		want := []uint16{150, 152}
		if try == nackTries {
			want = nil
		}
		if len(got) != len(want) || len(got) > 0 && !(got[0]+got[1] == 302 && got[0] != got[1]) {
			t.Errorf("try %d: NACKed %v, want %v", try, got, want)
		}
	}
}

// TestTapTWCCFeedback: the transport-wide feedback the tap sends parses with pion/rtcp and
// reports every packet it saw, with its arrival time.
func TestTapTWCCFeedback(t *testing.T) {
	var clock time.Duration
	tp := newTestTap(&clock)
	lightStream(tp)
	for i := uint16(0); i < 20; i++ {
		if i == 7 {
			continue
		}
		clock += 5 * time.Millisecond
		tp.swallow(srtpLike(t, 1000+i, 500+i, uint32(i)*3000, true, 300))
	}
	pkts, _ := tp.feedback(clock, true, nil)
	raw, err := rtcp.Marshal(pkts)
	if err != nil {
		t.Fatal(err)
	}
	back, err := rtcp.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var cc *rtcp.TransportLayerCC
	var rr *rtcp.ReceiverReport
	for _, p := range back {
		switch p := p.(type) {
		case *rtcp.TransportLayerCC:
			cc = p
		case *rtcp.ReceiverReport:
			rr = p
		}
	}
	if cc == nil || cc.BaseSequenceNumber != 500 || cc.PacketStatusCount != 20 || len(cc.RecvDeltas) != 19 {
		t.Fatalf("transport-wide feedback %+v", cc)
	}
	for i, d := range cc.RecvDeltas[1:] {
		if d.Delta != 5000 {
			t.Errorf("delta %d: %d µs, want the 5 ms between arrivals", i+1, d.Delta)
		}
	}
	if rr == nil || len(rr.Reports) != 1 || rr.Reports[0].SSRC != testSSRC || rr.Reports[0].TotalLost != 1 ||
		rr.Reports[0].LastSequenceNumber&0xffff != 1019 || rr.Reports[0].FractionLost == 0 {
		t.Fatalf("receiver report %+v", rr)
	}
	if pkts, _ := tp.feedback(clock, false, nil); len(pkts) != 1 { // the NACK for 1007 only
		t.Errorf("feedback with nothing new: %v", pkts)
	}
}

// TestTapAllocatesNothing guards the per-packet path of a light receiver.
func TestTapAllocatesNothing(t *testing.T) {
	var clock time.Duration
	tp := newTestTap(&clock)
	lightStream(tp)
	seq := uint16(0)
	pkt := srtpLike(t, 0, 0, 0, true, 1100)
	const twseqAt = 12 + 4 + 1 // after the fixed header, the extension's header and the element's byte
	step := func() {
		seq++
		pkt[2], pkt[3] = byte(seq>>8), byte(seq)
		pkt[twseqAt], pkt[twseqAt+1] = byte(seq>>8), byte(seq)
		clock += time.Millisecond
		tp.swallow(pkt)
	}
	// Warm the TWCC recorder's window, with feedback every 100 packets as the loop sends it.
	for i := 0; i < 2000; i++ {
		step()
		if i%100 == 99 {
			tp.feedback(clock, true, nil)
		}
	}
	for round := 0; round < 5; round++ {
		if a := testing.AllocsPerRun(100, step); a != 0 {
			t.Errorf("%.1f allocations per packet", a)
		}
		tp.feedback(clock, true, nil)
	}
}

func TestVerifyPayload(t *testing.T) {
	key := []byte{0x90, 0x80, 0x05, 0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01}
	delta := []byte{0x90, 0x80, 0x05, 0x11, 0x02, 0x00, 0x00}
	if !verifyPayload("video", key) || !verifyPayload("video", delta) || !verifyPayload("audio", []byte{0xfc}) {
		t.Error("sound payloads rejected")
	}
	bad := append([]byte(nil), key...)
	bad[7] = 0x02
	if !verifyPayload("video", nil) {
		t.Error("a probe's padding-only packet rejected")
	}
	if verifyPayload("video", bad) || verifyPayload("video", []byte{0x90}) || verifyPayload("audio", nil) {
		t.Error("broken payloads accepted")
	}
}

// TestTapNACKsAreRateLimited: a burst of 20 lost packets is asked for at most nackBurst at a
// time, all of them within three feedback intervals.
func TestTapNACKsAreRateLimited(t *testing.T) {
	var clock time.Duration
	tp := newTestTap(&clock)
	st := lightStream(tp)
	tp.swallow(srtpLike(t, 1, 1, 0, true, 100))
	tp.swallow(srtpLike(t, 22, 2, 0, true, 100))
	asked := map[uint16]bool{}
	for tick := 0; tick < 3; tick++ {
		clock += feedbackInterval
		got := st.nack(clock, nil)
		if len(got) > nackBurst {
			t.Fatalf("tick %d: %d sequence numbers in one NACK", tick, len(got))
		}
		for _, seq := range got {
			asked[seq] = true
		}
	}
	if len(asked) != 20 {
		t.Errorf("asked for %d of the 20 missing", len(asked))
	}
}
