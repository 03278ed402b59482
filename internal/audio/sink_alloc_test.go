//go:build !race

// The race detector's instrumentation allocates on its own; this test runs in the plain pass.

package audio

import (
	"testing"

	"github.com/strata-rtc/strata/internal/media"
)

// TestSinkAllocatesNothing holds a participant's per-packet path — Receiver in, the sink's push
// into the jitter buffer and audio level read, the mixer tick's decode — at zero allocations, for
// Opus and for G.711 (decode and upsampling).
func TestSinkAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		codec   media.Codec
		frameTS uint32
		payload func(t *testing.T) [][]byte
	}{
		{media.CodecOpus, 960, func(t *testing.T) [][]byte { return toneFrames(t, upFormat, EncoderConfig{}, 440, 50) }},
		{media.CodecPCMA, 160, func(t *testing.T) [][]byte { return g711ToneFrames(t, ALaw, 440, 50) }},
	} {
		t.Run(tc.codec.String(), func(t *testing.T) {
			r := newSinkRig(t, tc.codec, Format{Rate: 16000, Channels: 2}, 2)
			pkts := rtpPackets(t, tc.payload(t), 0, tc.frameTS, 10)
			seq, ts, next, played := uint16(1000), uint32(5000), 0, 0
			step := func() {
				p := pkts[next%len(pkts)]
				media.SetSeq(p, seq)
				media.SetTimestamp(p, ts)
				seq, ts, next = seq+1, ts+tc.frameTS, next+1
				r.recv.WriteRTP(0, p, 0)
				if r.in.Next() != nil {
					played++
				}
			}
			for range 10 {
				step()
			}
			played = 0
			if allocs := testing.AllocsPerRun(200, step); allocs != 0 {
				t.Errorf("%.1f allocations per packet, want 0", allocs)
			}
			if played < 200 || r.sink.Levels() < 200 {
				t.Fatalf("played %d frames and read %d levels in 201 packets: the test measured nothing", played, r.sink.Levels())
			}
		})
	}
}
