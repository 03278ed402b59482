package sfu

import (
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
)

// TestReceiverCachesFollowTheStream: a receiver's caches and per-layer buffers take memory only
// for the layers that receive packets, audio slots a fifth of video slots.
func TestReceiverCachesFollowTheStream(t *testing.T) {
	audio := NewReceiver(ReceiverConfig{Codec: media.CodecOpus}, nil)
	for l := range audio.layers {
		if n := audio.layers[l].cache.Allocated(); n != 0 {
			t.Fatalf("audio layer %d holds %d bytes before any packet", l, n)
		}
	}
	audio.WriteRTP(0, opusWithLevel(t, 1, 30), 0)
	audioBytes := audio.layers[0].cache.Allocated()
	if audioBytes < 64*audioCacheBytesPerSlot || audioBytes > 64*audioCacheBytesPerSlot+64*32 {
		t.Fatalf("audio cache holds %d bytes, want 64 slots of %d", audioBytes, audioCacheBytesPerSlot)
	}
	for l := 1; l < len(audio.layers); l++ {
		if n := audio.layers[l].cache.Allocated(); n != 0 || audio.layers[l].w != nil {
			t.Fatalf("audio layer %d (never used) holds a %d-byte cache or its writing buffers", l, n)
		}
	}

	src, _, video, _ := newSimulcastTrack()
	src.layers = 2 // the publisher leaves its top layer out
	for range 3 {
		for l, pkts := range src.nextFrame() {
			for _, p := range pkts {
				video.WriteRTP(l, p, 0)
			}
		}
	}
	for l, want := range []bool{true, true, false} {
		n := video.layers[l].cache.Allocated()
		if want && (n < simulcastCacheMinSlots*videoCacheBytesPerSlot || n > 2*simulcastCacheMinSlots*videoCacheBytesPerSlot) {
			t.Fatalf("video layer %d holds %d bytes after 3 frames, want %d slots of %d", l, n, simulcastCacheMinSlots, videoCacheBytesPerSlot)
		}
		if !want && (n != 0 || video.layers[l].w != nil) {
			t.Fatalf("video layer %d (not sent) holds a %d-byte cache or its writing buffers", l, n)
		}
	}
	if audioBytes*3 > video.layers[0].cache.Allocated() {
		t.Fatalf("an audio cache (%d bytes) is not far smaller than a video layer's (%d)", audioBytes, video.layers[0].cache.Allocated())
	}
}

// TestDownTrackHistoryFollowsThePacketRate: a down-track remembers a second of what it forwarded
// (maxResendAge) in a history as long as that takes at the stream's rate, and nothing when the
// subscriber cannot ask for retransmissions (audio: no NACK negotiated).
func TestDownTrackHistoryFollowsThePacketRate(t *testing.T) {
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecOpus}, nil)
	d := NewDownTrack(recv, DownTrackConfig{ID: "a", RespondNACK: true, Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}})
	if _, err := d.Bind(&fakeBinding{}); err != nil {
		t.Fatal(err)
	}
	d.Start()
	for i := range 500 { // 10 s of 20 ms packets
		recv.WriteRTP(0, opusWithLevel(t, uint16(i), 30), time.Duration(i)*20*time.Millisecond)
	}
	if d.Stats().Packets != 500 {
		t.Fatalf("forwarded %d audio packets of 500", d.Stats().Packets)
	}
	if n := d.history.Len(); n != 0 {
		t.Fatalf("audio history of %d entries without NACK negotiated, want none", n)
	}

	for _, tc := range []struct{ perFrame, want int }{{1, 64}, {10, 512}} { // 30 and 300 packets/s
		bind := &fakeBinding{}
		recv, d, _, src := newSimulcastRig(t, bind, true)
		src.perFrame = tc.perFrame
		now := time.Second
		pump(recv, src, 300, &now) // 10 s
		if d.Stats().Packets < 290*uint64(tc.perFrame) {
			t.Fatalf("forwarded %d video packets", d.Stats().Packets)
		}
		if n := d.history.Len(); n != tc.want {
			t.Fatalf("video history at %d packets/s: %d entries, want %d", tc.perFrame*30, n, tc.want)
		}
	}
}

// TestDownTrackBuffersWaitForARetransmission: a down-track that never retransmits or pads holds
// no send buffers of its own.
func TestDownTrackBuffersWaitForARetransmission(t *testing.T) {
	bind := &fakeBinding{rtx: true}
	recv, d, _, src := newSimulcastRig(t, bind, true)
	now := time.Second
	pump(recv, src, 10, &now)
	if d.own != nil {
		t.Fatal("own buffers allocated before any retransmission")
	}
}
