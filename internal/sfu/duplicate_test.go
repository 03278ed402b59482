package sfu

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

// Chromium probes its uplink by resending recent packets over RTX, and Pion hands the repaired
// packets to strata like any other. Forwarded again, such a copy reaches the subscriber with a
// sequence number it already has: its SRTP replay check drops it before its transport-wide feedback,
// so strata's estimate of the subscriber's path counted every copy as lost.
func TestDuplicatePacketsAreDroppedAndCounted(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv, d, _, src := newSimulcastRig(t, bind, false)
	now := time.Second
	pump(recv, src, 10, &now)
	if cur := d.Current(); cur != lay(2, 2) {
		t.Fatalf("current %v, want the top layer", cur)
	}

	const copies = 5
	var held []byte // a packet delayed on the way: it arrives once, late, and must be forwarded
	dups := 0
	for range 20 {
		frame := src.nextFrame()
		for l, pkts := range frame {
			for i, p := range pkts {
				if l == 2 && held == nil && i == 0 {
					held = p
					continue
				}
				recv.WriteRTP(l, p, now)
			}
		}
		// Resend the top layer's newest packet, as a probe would.
		last := frame[2][len(frame[2])-1]
		for range copies {
			recv.WriteRTP(2, last, now)
			dups++
		}
		now += 33 * time.Millisecond
	}
	sentBeforeLate := len(bind.sent())
	recv.WriteRTP(2, held, now)
	if len(bind.sent()) != sentBeforeLate+1 {
		t.Fatalf("a late packet that never arrived before was not forwarded")
	}

	seen := map[uint16]bool{}
	for _, p := range bind.sent() {
		if seen[p.hdr.SequenceNumber] {
			t.Fatalf("sequence number %d forwarded twice", p.hdr.SequenceNumber)
		}
		seen[p.hdr.SequenceNumber] = true
	}
	if got := recv.Stats().Duplicates; got != uint64(dups) {
		t.Fatalf("Duplicates %d, want %d", got, dups)
	}
}

// A publisher that restarts a layer (a new SSRC) may reuse sequence numbers the old stream had:
// those are new packets, not copies.
func TestNewSSRCIsNotADuplicate(t *testing.T) {
	recv := NewReceiver(ReceiverConfig{ID: "feed/1", Codec: media.CodecVP8}, func(int, uint32) {})
	src := newVP8Source()
	src.layers = 1
	first := src.nextFrame()[0]
	for _, p := range first {
		recv.WriteRTP(0, p, time.Second)
	}
	for _, p := range first {
		again := append([]byte(nil), p...)
		again[11]++ // another SSRC, same sequence numbers
		recv.WriteRTP(0, again, time.Second)
	}
	if st := recv.Stats(); st.Duplicates != 0 || st.Packets != uint64(2*len(first)) {
		t.Fatalf("stats %+v: packets of a new SSRC were taken for copies", st)
	}
}
