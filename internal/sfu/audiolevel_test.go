package sfu

import (
	"testing"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
)

func opusWithLevel(t *testing.T, seq uint16, level byte) []byte {
	t.Helper()
	p := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: seq, SSRC: 77}, Payload: []byte{0xf8, 0xff, 0xfe}}
	if err := p.SetExtension(1, []byte{level}); err != nil {
		t.Fatal(err)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The callback gets the exact average of every AudioLevelPackets levels (Janus compares it as a
// float with the room's threshold), and nothing while the stream is muted by a moderator.
func TestAudioLevelAverageIsExactAndSkipsMutedStreams(t *testing.T) {
	r := NewReceiver(ReceiverConfig{Codec: media.CodecOpus, Extensions: ExtIDs{AudioLevel: 1}, AudioLevelPackets: 4}, nil)
	var got []float64
	r.OnAudioLevel(func(avg float64) { got = append(got, avg) })
	seq := uint16(0)
	send := func(levels ...byte) {
		for _, l := range levels {
			seq++
			r.WriteRTP(0, opusWithLevel(t, seq, l), 0)
		}
	}
	send(25, 25, 25, 26) // 25.25: not below a threshold of 25 (an integer average would say 25)
	if len(got) != 1 || got[0] != 25.25 {
		t.Fatalf("averages %v, want [25.25]", got)
	}
	r.SetMuted(true)
	send(10, 10, 10, 10, 10)
	if len(got) != 1 {
		t.Fatalf("levels of a muted stream were averaged: %v", got)
	}
	r.SetMuted(false)
	send(10, 20, 30, 40)
	if len(got) != 2 || got[1] != 25 {
		t.Fatalf("averages %v, want [25.25 25]", got)
	}
}
