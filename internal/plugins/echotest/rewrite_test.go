package echotest

import (
	"testing"
	"time"

	"github.com/pion/rtp"
)

// packet marshals an RTP packet with a VP8 payload.
func packet(t testing.TB, seq uint16, ts uint32, ssrc uint32, picID uint16, tl0 uint8) []byte {
	t.Helper()
	p := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: ts, SSRC: ssrc}, Payload: vp8Payload(picID, tl0, 0, false, 0)}
	_ = p.SetExtension(1, []byte("1"))
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

type out struct {
	seq uint16
	ts  uint32
	pic uint16
	tl0 uint8
}

func rewrite(t *testing.T, r *rewriter, raw []byte, now time.Duration) out {
	t.Helper()
	v, ok := parseRTP(raw)
	if !ok {
		t.Fatal("bad packet")
	}
	info, _ := parseVP8(raw[v.payload:v.payloadEnd])
	r.forward(raw, v, &info, now)
	v, _ = parseRTP(raw)
	p := raw[v.payload:]
	return out{seq: v.seq, ts: v.ts, pic: uint16(p[2]&0x7f)<<8 | uint16(p[3]), tl0: p[4]}
}

func TestRewriterPassesASingleStreamThrough(t *testing.T) {
	r := newRewriter(90000)
	for i := range 5 {
		seq := uint16(65533 + i) // wraps
		got := rewrite(t, &r, packet(t, seq, uint32(1000+3000*i), 7, uint16(32766+i)&0x7fff, uint8(254+i)), time.Duration(i)*33*time.Millisecond)
		if got.seq != seq || got.ts != uint32(1000+3000*i) || got.pic != uint16(32766+i)&0x7fff || got.tl0 != uint8(254+i) {
			t.Fatalf("packet %d changed: %+v", i, got)
		}
	}
}

func TestRewriterSwitchContinuesTheStream(t *testing.T) {
	r := newRewriter(90000)
	ms := time.Millisecond
	a := rewrite(t, &r, packet(t, 100, 9000, 1, 50, 10), 0)
	b := rewrite(t, &r, packet(t, 101, 12000, 1, 51, 11), 33*ms)
	r.switchSource()
	// Another source with unrelated numbers, 33 ms later.
	c := rewrite(t, &r, packet(t, 7000, 500000, 2, 9000, 200), 66*ms)
	d := rewrite(t, &r, packet(t, 7001, 503000, 2, 9001, 201), 99*ms)
	if a.seq != 100 || b.seq != 101 || c.seq != 102 || d.seq != 103 {
		t.Errorf("sequence %d %d %d %d", a.seq, b.seq, c.seq, d.seq)
	}
	if step := c.ts - b.ts; step < 2900 || step > 3100 {
		t.Errorf("timestamp step across the switch %d, want ~33 ms at 90 kHz", step)
	}
	if d.ts-c.ts != 3000 {
		t.Errorf("timestamps after the switch step %d", d.ts-c.ts)
	}
	if c.pic != 52 || d.pic != 53 || c.tl0 != 12 || d.tl0 != 13 {
		t.Errorf("picture id / TL0PICIDX after switch: %+v %+v", c, d)
	}
}

func TestRewriterSkipLeavesNoHole(t *testing.T) {
	r := newRewriter(90000)
	rewrite(t, &r, packet(t, 10, 0, 1, 1, 0), 0)
	v, _ := parseRTP(packet(t, 11, 3000, 1, 2, 0))
	r.skip(v) // e.g. a temporal layer above the target
	got := rewrite(t, &r, packet(t, 12, 6000, 1, 3, 0), time.Millisecond)
	if got.seq != 11 {
		t.Errorf("after a skipped packet the next is %d, want 11", got.seq)
	}
	// A late, older packet that is skipped does not shift the stream again.
	late, _ := parseRTP(packet(t, 9, 0, 1, 0, 0))
	r.skip(late)
	if got := rewrite(t, &r, packet(t, 13, 9000, 1, 4, 0), 2*time.Millisecond); got.seq != 12 {
		t.Errorf("after a late skip the next is %d, want 12", got.seq)
	}
}

func TestRewriterResumeAfterPause(t *testing.T) {
	r := newRewriter(48000)
	rewrite(t, &r, packet(t, 500, 48000, 1, 0, 0), 0)
	r.switchSource() // audio:false, then audio:true
	got := rewrite(t, &r, packet(t, 600, 48000+100*960, 1, 0, 0), 2*time.Second)
	if got.seq != 501 {
		t.Errorf("resume continues at %d, want 501", got.seq)
	}
	if step := got.ts - 48000; step < 95000 || step > 97000 {
		t.Errorf("timestamp advanced %d over a 2 s pause at 48 kHz", step)
	}
}

// BenchmarkRewrite measures the per-packet forward step (parse, select, rewrite in place).
func BenchmarkRewrite(b *testing.B) {
	raw := packet(b, 1, 0, 1, 1, 0)
	r := newRewriter(90000)
	sel := newSimulcastSelector()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		setSeq(raw, uint16(i))
		v, _ := parseRTP(raw)
		info, _ := parseVP8(raw[v.payload:v.payloadEnd])
		info.keyframe = true
		now := time.Duration(i) * time.Millisecond
		if s := sel.accept(2, &info, now); s.forward {
			r.forward(raw, v, &info, now)
		}
		blankExtensions(raw, v, 3, 4)
	}
}
