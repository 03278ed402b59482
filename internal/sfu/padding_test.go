package sfu

import (
	"testing"
	"time"

	"github.com/pion/rtcp"
)

// TestPaddingGoesOnTheStreamBetweenFrames: probe padding is sent on the track's own SSRC, so that
// the feedback about it names a stream Pion reads RTCP for; it takes sequence numbers in line with
// the media (no hole, no duplicate), only between frames, and carries the last timestamp.
func TestPaddingGoesOnTheStreamBetweenFrames(t *testing.T) {
	bind := &fakeBinding{record: true, rtx: true}
	recv, d, _, src := newSimulcastRig(t, bind, true)
	now := time.Second
	pump(recv, src, 10, &now)
	before := bind.sent()
	lastMedia := before[len(before)-1]
	if n := d.Pad(1000); n < 1000 {
		t.Fatalf("padded %d bytes between frames", n)
	}
	pads := bind.sent()[len(before):]
	for i, p := range pads {
		if p.hdr.SSRC != 1111 || p.hdr.PayloadType != 96 || len(p.payload) != 0 || p.hdr.PaddingSize != paddingSize {
			t.Fatalf("padding packet %+v, want padding only on the media stream", p.hdr)
		}
		if p.hdr.SequenceNumber != lastMedia.hdr.SequenceNumber+1+uint16(i) || p.hdr.Timestamp != lastMedia.hdr.Timestamp {
			t.Fatalf("padding %d: seq %d ts %d after media seq %d ts %d", i, p.hdr.SequenceNumber, p.hdr.Timestamp,
				lastMedia.hdr.SequenceNumber, lastMedia.hdr.Timestamp)
		}
	}
	pump(recv, src, 5, &now)
	all := bind.sent()
	next := all[len(before)+len(pads)]
	if next.hdr.SequenceNumber != pads[len(pads)-1].hdr.SequenceNumber+1 {
		t.Fatalf("media after the padding at %d, want %d", next.hdr.SequenceNumber, pads[len(pads)-1].hdr.SequenceNumber+1)
	}
	// Media and padding together number without a hole or a repeat.
	for i := 1; i < len(all); i++ {
		if all[i].hdr.SSRC == 1111 && all[i].hdr.SequenceNumber != all[i-1].hdr.SequenceNumber+1 {
			t.Fatalf("packet %d numbered %d after %d", i, all[i].hdr.SequenceNumber, all[i-1].hdr.SequenceNumber)
		}
	}
	// A NACK for a padding packet is not answered (there is nothing to rebuild it from).
	n := len(all)
	d.HandleRTCP(rtcpOf(t, &rtcp.TransportLayerNack{MediaSSRC: 1111, Nacks: rtcp.NackPairsFromSequenceNumbers([]uint16{pads[0].hdr.SequenceNumber})}), now)
	if len(bind.sent()) != n {
		t.Fatal("a NACKed padding packet was retransmitted")
	}
	// Not inside a frame: with the last packet forwarded not ending a frame, nothing is sent.
	d.mu.Lock()
	d.lastMarker = false
	d.mu.Unlock()
	if n := d.Pad(1000); n != 0 {
		t.Fatalf("padded %d bytes inside a frame", n)
	}
}

// TestRetransmissionsAreLimited: a packet is sent again at most twice, not twice within
// resendSpacing, however often the subscriber NACKs it (a receiver behind a congested link NACKs
// every retransmission the link drops in turn), and not at all once it is too old.
func TestRetransmissionsAreLimited(t *testing.T) {
	bind := &fakeBinding{record: true, rtx: true}
	recv, d, _, src := newSimulcastRig(t, bind, true)
	now := time.Second
	pump(recv, src, 10, &now)
	lost := bind.sent()[5].hdr.SequenceNumber
	nack := rtcpOf(t, &rtcp.TransportLayerNack{MediaSSRC: 1111, Nacks: rtcp.NackPairsFromSequenceNumbers([]uint16{lost})})
	for i := 0; i < 10; i++ { // ten NACKs within 90 ms
		d.HandleRTCP(nack, now+time.Duration(i)*10*time.Millisecond)
	}
	if st := d.Stats(); st.Retransmitted != 1 {
		t.Fatalf("%d retransmissions for NACKs within %v, want 1", st.Retransmitted, resendSpacing)
	}
	for i := 0; i < 10; i++ { // and then one every resendSpacing
		d.HandleRTCP(nack, now+time.Duration(i+1)*resendSpacing)
	}
	if st := d.Stats(); st.Retransmitted != maxResends || st.NACKed != 20 {
		t.Fatalf("%d retransmissions of one packet (%d NACKs), want %d", st.Retransmitted, st.NACKed, maxResends)
	}
	// A packet NACKed for the first time when it is older than maxResendAge (lost in an outage)
	// is not sent again: no receiver plays it that late.
	old := bind.sent()[6].hdr.SequenceNumber
	d.HandleRTCP(rtcpOf(t, &rtcp.TransportLayerNack{MediaSSRC: 1111, Nacks: rtcp.NackPairsFromSequenceNumbers([]uint16{old})}), now+maxResendAge+time.Second)
	if st := d.Stats(); st.Retransmitted != maxResends {
		t.Fatalf("a packet older than %v was sent again", maxResendAge)
	}
}
