package sfu

import (
	"testing"
	"time"

	"github.com/pion/rtcp"
)

// feedbackFixture is a down-track that has forwarded a few frames of simulcast, and a subscriber's
// compound feedback about it: a receiver report, a NACK of the last packets forwarded (answered
// from the cache), a PLI and transport-wide feedback (which the down-track leaves to the
// estimator; last, as the padding Pion gives it may only end a compound packet).
func feedbackFixture(t testing.TB) (d *DownTrack, fb []byte, now time.Duration) {
	src, mu, recv, d := newSimulcastTrack()
	d.cfg.RespondNACK = true
	bind := &fakeBinding{rtx: true, record: true}
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.SetTarget(lay(2, 2))
	d.Start()
	now = time.Second
	for range 8 {
		mu.Lock()
		frame := src.nextFrame()
		mu.Unlock()
		for l, pkts := range frame {
			for _, p := range pkts {
				recv.WriteRTP(l, p, now)
			}
		}
		now += 33 * time.Millisecond
	}
	sent := bind.sent()
	if len(sent) < 4 {
		t.Fatalf("the down-track forwarded %d packets", len(sent))
	}
	bind.mu.Lock()
	bind.record = false
	bind.mu.Unlock()
	var lost []uint16
	for _, p := range sent[len(sent)-3:] {
		lost = append(lost, p.hdr.SequenceNumber)
	}
	fb = rtcpOf(t,
		&rtcp.ReceiverReport{SSRC: 5, Reports: []rtcp.ReceptionReport{{SSRC: 1111, FractionLost: 3}}},
		&rtcp.TransportLayerNack{SenderSSRC: 5, MediaSSRC: 1111, Nacks: rtcp.NackPairsFromSequenceNumbers(lost)},
		&rtcp.PictureLossIndication{SenderSSRC: 5, MediaSSRC: 1111},
		&rtcp.TransportLayerCC{
			SenderSSRC: 5, MediaSSRC: 1111, BaseSequenceNumber: 1, PacketStatusCount: 2, ReferenceTime: 1,
			PacketChunks: []rtcp.PacketStatusChunk{&rtcp.RunLengthChunk{PacketStatusSymbol: rtcp.TypeTCCPacketReceivedSmallDelta, RunLength: 2}},
			RecvDeltas: []*rtcp.RecvDelta{
				{Type: rtcp.TypeTCCPacketReceivedSmallDelta, Delta: 250},
				{Type: rtcp.TypeTCCPacketReceivedSmallDelta, Delta: 500},
			},
		},
	)
	return d, fb, now
}

// TestFeedbackIsRead: every part of the fixture's compound packet reaches the down-track.
func TestFeedbackIsRead(t *testing.T) {
	d, fb, now := feedbackFixture(t)
	d.HandleRTCP(fb, now)
	st := d.Stats()
	if st.NACKed != 3 || st.Retransmitted != 3 || st.KeyframeRequests != 1 {
		t.Errorf("after one feedback packet: %d NACKed, %d retransmitted, %d keyframe requests; want 3, 3, 1",
			st.NACKed, st.Retransmitted, st.KeyframeRequests)
	}
	if loss, ok := d.TakeLoss(); !ok || loss != 3.0/256 {
		t.Errorf("receiver-report loss %v (%v), want 3/256", loss, ok)
	}
	// A malformed part is skipped; the parts after it are still read.
	bad := append([]byte{0x81, 0xce, 0, 1, 0, 0, 0, 5}, rtcpOf(t, &rtcp.PictureLossIndication{SenderSSRC: 5, MediaSSRC: 1111})...)
	d.HandleRTCP(bad, now+time.Second)
	if st := d.Stats(); st.KeyframeRequests != 2 {
		t.Errorf("%d keyframe requests after a PLI behind a short one, want 2", st.KeyframeRequests)
	}
}

// BenchmarkHandleRTCP is one compound feedback packet of a subscriber read by its down-track.
func BenchmarkHandleRTCP(b *testing.B) {
	d, fb, now := feedbackFixture(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(fb)))
	for b.Loop() {
		d.HandleRTCP(fb, now)
	}
}
