package echotest

import (
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
)

// Extension ids the packets below carry: mid, and the rid the echo must not repeat.
const (
	testMidExt = 1
	testRidExt = 4
)

// simulcastStream is an echo stream already echoing layer 2 at temporal layer 0, without a session or
// a track: enough for the per-packet decision and rewriting.
func simulcastStream() *echoStream {
	st := &echoStream{video: true, codec: "vp8", kind: media.CodecVP8, simulcast: true, ridExts: [2]uint8{testRidExt, 0}}
	st.sim = simulcastSelector{target: 2, current: 2, temporalTarget: 0, temporal: 0}
	st.svc = newSVCSelector()
	st.rw.Init(90000, 0)
	return st
}

// simulcastPacket is a VP8 packet of layer "h" with a 15-bit picture id and a temporal layer id.
func simulcastPacket(t testing.TB, seq uint16, pic uint16, tid uint8) []byte {
	t.Helper()
	p := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: 3000 * uint32(pic), SSRC: 5},
		Payload: vp8Payload(pic, uint8(pic/2), tid, false, 'h')}
	_ = p.SetExtension(testMidExt, []byte("0"))
	_ = p.SetExtension(testRidExt, []byte("h"))
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestTemporalLayerDropLeavesNoSequenceHole: with temporal layer 1 dropped, every other packet is
// echoed; the echo's sequence numbers have no hole, the rid is gone and the mid stays.
func TestTemporalLayerDropLeavesNoSequenceHole(t *testing.T) {
	st := simulcastStream()
	var echoed []rtp.Packet
	for i := range 20 {
		pkt := simulcastPacket(t, uint16(65530+i), uint16(100+i), uint8(i%2))
		if !st.prepareLocked(pkt, 2, true, time.Duration(i)*10*time.Millisecond) {
			continue
		}
		var p rtp.Packet
		if err := p.Unmarshal(pkt); err != nil {
			t.Fatalf("echoed packet does not parse: %v", err)
		}
		echoed = append(echoed, p)
	}
	if len(echoed) != 10 {
		t.Fatalf("%d packets echoed, want the 10 of temporal layer 0", len(echoed))
	}
	for i, p := range echoed {
		if p.SequenceNumber != uint16(65530+i) {
			t.Errorf("echoed packet %d has sequence %d, want %d", i, p.SequenceNumber, uint16(65530+i))
		}
		if p.GetExtension(testRidExt) != nil || string(p.GetExtension(testMidExt)) != "0" {
			t.Errorf("echoed packet %d: rid %q, mid %q", i, p.GetExtension(testRidExt), p.GetExtension(testMidExt))
		}
	}
}

// TestPausedStreamEchoesNothingAndResumesContinuously: while inactive nothing is echoed, and the
// first packet after the pause follows the last one before it.
func TestPausedStreamEchoesNothingAndResumesContinuously(t *testing.T) {
	st := simulcastStream()
	st.sim.temporalTarget, st.sim.temporal = 2, 2
	ms := time.Millisecond
	if !st.prepareLocked(simulcastPacket(t, 10, 1, 0), 2, true, 0) {
		t.Fatal("first packet not echoed")
	}
	for i := range 5 {
		if st.prepareLocked(simulcastPacket(t, uint16(11+i), uint16(2+i), 0), 2, false, time.Duration(i)*20*ms) {
			t.Fatal("packet echoed while paused")
		}
	}
	pkt := simulcastPacket(t, 16, 7, 0)
	if !st.prepareLocked(pkt, 2, true, 200*ms) {
		t.Fatal("not echoed after resuming")
	}
	if h, _ := media.ParseRTP(pkt); h.Seq != 11 {
		t.Errorf("resumed at sequence %d, want 11", h.Seq)
	}
}

// BenchmarkRewrite measures the per-packet echo step (parse, select, rewrite and blank the rid in
// place), half of the packets being dropped as a temporal layer above the target.
func BenchmarkRewrite(b *testing.B) {
	st := simulcastStream()
	raw := simulcastPacket(b, 1, 1, 0)
	pristine := append([]byte(nil), raw...)
	h, _ := media.ParseRTP(raw)
	tidAt := h.PayloadStart + 5 // TID|Y|KEYIDX in the VP8 descriptor
	echoed := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		copy(raw, pristine) // restore the rid the previous echo blanked
		media.SetSeq(raw, uint16(i))
		raw[tidAt] = byte(i%2)<<6 | 0x20
		if st.prepareLocked(raw, 2, true, time.Duration(i)*time.Millisecond) {
			echoed++
		}
	}
	if b.N > 10 && (echoed < b.N/2-1 || echoed > b.N/2+1) {
		b.Fatalf("%d of %d packets echoed, want half", echoed, b.N)
	}
}
