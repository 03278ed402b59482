package media

import (
	"testing"
	"time"
)

// TestRewriterPassesASingleStreamThrough: without switches or drops the rewriter changes nothing,
// across the wrap of sequence numbers, picture ids and TL0PICIDX.
func TestRewriterPassesASingleStreamThrough(t *testing.T) {
	r := NewRewriter(90000)
	for i := range 6 {
		seq, ts, pic, tl0 := uint16(65533+i), uint32(1000+3000*i), uint16(32765+i)&0x7fff, uint8(253+i)
		got, ok := rewriteOne(t, r, vp8Packet(seq, ts, pic, tl0, 0, i == 0, true), time.Duration(i)*33*time.Millisecond)
		if !ok || got.seq != seq || got.ts != ts || got.pic != pic || got.tl0 != tl0 {
			t.Fatalf("packet %d changed: %+v (ok=%v)", i, got, ok)
		}
	}
}

// TestRewriterResumeAfterPause: a stream paused and resumed (the echo test's audio:false, then
// audio:true) continues its sequence numbers, and its timestamps advance by the wall time of the
// pause rather than by the source's own jump.
func TestRewriterResumeAfterPause(t *testing.T) {
	r := NewRewriter(48000)
	first, _ := rewriteOne(t, r, vp8Packet(500, 48000, 1, 0, 0, true, true), 0)
	r.Switch()
	got, ok := rewriteOne(t, r, vp8Packet(600, 48000+100*960, 2, 0, 0, false, true), 2*time.Second)
	if !ok {
		t.Fatal("first packet after the pause refused")
	}
	if got.seq != first.seq+1 {
		t.Errorf("resume continues at %d, want %d", got.seq, first.seq+1)
	}
	if step := got.ts - first.ts; step < 95000 || step > 97000 {
		t.Errorf("timestamp advanced %d over a 2 s pause at 48 kHz, want ~96000", step)
	}
}

// TestRewriterPadKeepsTheNumberingContinuous: padding packets strata inserts take the next numbers;
// the packets after them follow on, a late packet from before them keeps its place, and one from
// a drop before them is still refused.
func TestRewriterPadKeepsTheNumberingContinuous(t *testing.T) {
	r := NewRewriter(90000)
	seqOf := func(in uint16) (uint16, bool) {
		got, ok := rewriteOne(t, r, vp8Packet(in, 3000, 7, 0, 0, false, true), 0)
		return got.seq, ok
	}
	for in := uint16(100); in <= 102; in++ {
		seqOf(in)
	}
	// 103 is late (still in flight); 104 arrives.
	if out, _ := seqOf(104); out != 104 {
		t.Fatalf("104 → %d", out)
	}
	pad1, ts, ok := r.Pad()
	pad2, _, _ := r.Pad()
	if !ok || pad1 != 105 || pad2 != 106 || ts != 3000 {
		t.Fatalf("padding got %d, %d (ts %d, ok %v), want 105, 106 at the last timestamp", pad1, pad2, ts, ok)
	}
	if out, _ := seqOf(105); out != 107 {
		t.Fatalf("the packet after the padding → %d, want 107", out)
	}
	if out, ok := seqOf(103); !ok || out != 103 {
		t.Fatalf("the late packet from before the padding → %d (ok %v), want its own 103", out, ok)
	}
	// After a switch the next packet continues after the padding.
	r.Switch()
	pad3, _, _ := r.Pad()
	if out, _ := seqOf(900); pad3 != 108 || out != 109 {
		t.Fatalf("padding %d and the next packet %d after a switch, want 108 and 109", pad3, out)
	}
	if _, _, ok := NewRewriter(90000).Pad(); ok {
		t.Fatal("padding before any packet was forwarded")
	}
}
