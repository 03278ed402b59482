package audio

import "testing"

// A gate at -50 dBov opens on a -20 dBov tone at once, stays open through the hangover of quiet
// frames after it, then closes on -70 dBov noise; disabled, it never closes.
func TestGateOpensOnSpeechAndClosesAfterTheHangover(t *testing.T) {
	f := Format{Rate: 16000, Channels: 1}
	loud, quiet := make([]int16, f.FrameLen()), make([]int16, f.FrameLen())
	Tone(loud, 1, f.Rate, 440, 32767*0.1*1.414, 0) // -20 dBov RMS
	Tone(quiet, 1, f.Rate, 440, 32767*0.0003*1.414, 0)
	g := NewGate(-50, 3)
	if g.Open(quiet) {
		t.Fatal("a -70 dBov frame opens a closed gate")
	}
	if !g.Open(loud) {
		t.Fatal("a -20 dBov frame does not open the gate")
	}
	for i := range 3 {
		if !g.Open(quiet) {
			t.Fatalf("quiet frame %d of the hangover closes the gate", i)
		}
	}
	if g.Open(quiet) {
		t.Fatal("the gate is still open after the hangover")
	}
	off := NewGate(0, 3)
	if !off.Open(quiet) || !off.Open(make([]int16, f.FrameLen())) {
		t.Fatal("a disabled gate closes")
	}
	if n := testing.AllocsPerRun(100, func() { g.Open(loud) }); n != 0 {
		t.Fatalf("Open allocates %.0f times", n)
	}
}
