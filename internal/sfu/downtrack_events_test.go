package sfu

import (
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
)

// TestDownTrackEvents: a stream carrying telephone-events beside Opus (a SIP phone's, through
// the bridge) goes out with the subscriber's payload type for each, in one sequence; events the
// subscriber did not negotiate (telephone-event/48000 here) are dropped and the audio still goes.
func TestDownTrackEvents(t *testing.T) {
	for _, tc := range []struct {
		rate uint32
		want []uint8
	}{{8000, []uint8{111, 126, 111}}, {48000, []uint8{111, 111}}} {
		bind := &fakeBinding{record: true}
		recv := NewReceiver(ReceiverConfig{ID: "plain-audio", Codec: media.CodecOpus}, func(int, uint32) {})
		ev := webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: tc.rate}
		d := NewDownTrack(recv, DownTrackConfig{ID: "a", StreamID: "s",
			Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, Events: &ev, EventsPT: 101})
		if _, err := d.Bind(bind); err != nil {
			t.Fatal(err)
		}
		d.Start()
		for i, pt := range []uint8{107, 101, 107} {
			pkt, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: pt, SequenceNumber: uint16(i + 1), Timestamp: uint32(i * 960), SSRC: 5},
				Payload: []byte{5, 10, 0, 160}}).Marshal()
			recv.WriteRTP(0, pkt, time.Second+time.Duration(i)*20*time.Millisecond)
		}
		var got []uint8
		sent := bind.sent()
		for i, p := range sent {
			got = append(got, p.hdr.PayloadType)
			if i > 0 && p.hdr.SequenceNumber != sent[i-1].hdr.SequenceNumber+1 {
				t.Errorf("%d Hz: sequence %d after %d", tc.rate, p.hdr.SequenceNumber, sent[i-1].hdr.SequenceNumber)
			}
		}
		if string(got) != string(tc.want) {
			t.Errorf("%d Hz: sent payload types %v, want %v", tc.rate, got, tc.want)
		}
		d.Stop()
		recv.Close()
	}
}
