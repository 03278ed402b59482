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
	for _, c := range []media.Codec{media.CodecOpus, media.CodecPCMA} {
		t.Run(c.String(), func(t *testing.T) {
			l := newSinkLoop(t, c)
			for range 10 {
				l.step()
			}
			l.played = 0
			if allocs := testing.AllocsPerRun(200, l.step); allocs != 0 {
				t.Errorf("%.1f allocations per packet, want 0", allocs)
			}
			if l.played < 200 || l.sink.Levels() < 200 {
				t.Fatalf("played %d frames and read %d levels in 201 packets: the test measured nothing", l.played, l.sink.Levels())
			}
		})
	}
}

// A tick of a room with G.711 participants (decode and upsampling in, downsampling and encode out)
// allocates nothing either.
func TestMixedRoomTickAllocatesNothing(t *testing.T) {
	r := newMixedRoom(t)
	for range 10 {
		r.step(t)
	}
	if allocs := testing.AllocsPerRun(100, func() { r.step(t) }); allocs != 0 {
		t.Errorf("%.1f allocations per tick, want 0", allocs)
	}
}
