package media

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestCacheKeepsRecentPackets(t *testing.T) {
	c := NewCache(20, SlotSize)
	if c.Slots() != 32 {
		t.Fatalf("slots %d, want 32", c.Slots())
	}
	buf := make([]byte, SlotSize)
	for seq := uint16(65500); seq != 40; seq++ {
		pkt := []byte{byte(seq), byte(seq >> 8), 1, 2, 3}
		if !c.Store(seq, pkt, time.Duration(seq)) {
			t.Fatal("store failed")
		}
	}
	// The last 32 sequence numbers (9..39) are there, older ones were overwritten.
	for seq := uint16(9); seq < 40; seq++ {
		n, _ := c.Get(seq, buf)
		if n != 5 || buf[0] != byte(seq) || buf[1] != byte(seq>>8) {
			t.Fatalf("seq %d: n=%d %x", seq, n, buf[:n])
		}
	}
	if n, _ := c.Get(65530, buf); n != 0 {
		t.Fatal("overwritten packet returned")
	}
	if c.Store(1, make([]byte, SlotSize+1), 0) {
		t.Fatal("oversized packet stored")
	}
	if n, _ := c.Get(39, make([]byte, 2)); n != 0 {
		t.Fatal("copied into a too-small buffer")
	}
	st := c.Stats()
	if st.TooBig != 1 || st.Misses != 2 || st.Hits != 31 {
		t.Fatalf("stats %+v", st)
	}
	c.Reset()
	if n, _ := c.Get(39, buf); n != 0 {
		t.Fatal("reset kept packets")
	}
}

// TestCounterLeavesNoHolesStrataMade replays random streams (losses, reordering, drops by strata,
// source switches) and checks the output numbering: forwarded packets of a source keep their order
// and distances minus the dropped ones, and switches continue right after the last output.
func TestCounterLeavesNoHolesStrataMade(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		c := newCounter(16)
		in := uint32(rng.IntN(1 << 16))
		var outs []uint32
		seen := map[uint32]bool{}
		lastOut, lost := uint32(0), uint32(0)
		for i := 0; i < 400; i++ {
			switch r := rng.IntN(100); {
			case r < 3 && len(outs) > 0: // source switch: next value is arbitrary, output continues
				c.switchSource()
				in = uint32(rng.IntN(1 << 16))
				out, ok := c.forward(in)
				if !ok || out != (lastOut+1)&0xffff {
					t.Fatalf("round %d: switch gave %d ok=%v after %d", round, out, ok, lastOut)
				}
				lastOut = out
				outs = append(outs, out)
				seen, lost = map[uint32]bool{out: true}, 0
			case r < 20: // strata drops this one
				c.drop(in)
			case r < 25: // lost upstream: skipped entirely, the receiver must see the hole
				lost++
			default:
				out, ok := c.forward(in)
				if !ok {
					t.Fatalf("round %d: in-order value refused", round)
				}
				if seen[out] {
					t.Fatalf("round %d: output %d given twice", round, out)
				}
				if len(outs) > 0 && out != (lastOut+1+lost)&0xffff {
					t.Fatalf("round %d: output %d after %d with %d lost upstream", round, out, lastOut, lost)
				}
				seen[out] = true
				outs = append(outs, out)
				lastOut, lost = out, 0
			}
			in = (in + 1) & 0xffff
		}
		// Outputs increase by one, or by more only where the source lost packets.
		for i := 1; i < len(outs); i++ {
			if d := (outs[i] - outs[i-1]) & 0xffff; d == 0 || d > 0x8000 {
				t.Fatalf("round %d: outputs not increasing: %d then %d", round, outs[i-1], outs[i])
			}
		}
	}
}

func TestCounterMapsLatePackets(t *testing.T) {
	c := newCounter(16)
	// 10 11 [12 dropped] 14 (13 late) 15
	mustForward(t, &c, 10, 10)
	mustForward(t, &c, 11, 11)
	c.drop(12)
	mustForward(t, &c, 14, 13)
	mustForward(t, &c, 13, 12) // late, but after the drop of 12: it takes 12's place
	mustForward(t, &c, 15, 14)
	if _, ok := c.forward(12); ok {
		t.Fatal("a dropped packet arriving again was forwarded")
	}
	// A packet from before the last switch is refused.
	c.switchSource()
	mustForward(t, &c, 500, 15)
	if _, ok := c.forward(499); ok {
		t.Fatal("a packet from before the switch was forwarded")
	}
	// Late packets before a run of drops keep the offset they had.
	c.drop(501)
	c.drop(502)
	mustForward(t, &c, 504, 17) // 503 is late: it keeps its place (16) in the output
	mustForward(t, &c, 503, 16)
}

func mustForward(t *testing.T, c *counter, in, want uint32) {
	t.Helper()
	out, ok := c.forward(in)
	if !ok || out != want {
		t.Fatalf("forward(%d) = %d ok=%v, want %d", in, out, ok, want)
	}
}

// vp8Packet builds an RTP packet with a VP8 descriptor carrying a 15-bit picture id, TL0PICIDX and
// TID.
func vp8Packet(seq uint16, ts uint32, pic uint16, tl0 uint8, tid uint8, key, start bool) []byte {
	b := []byte{0x80, 96, byte(seq >> 8), byte(seq), byte(ts >> 24), byte(ts >> 16), byte(ts >> 8), byte(ts), 0, 0, 0, 1}
	d0 := byte(0x80)
	if start {
		d0 |= 0x10
	}
	hdr := byte(0x01)
	if key {
		hdr = 0
	}
	return append(b, d0, 0xE0, 0x80|byte(pic>>8), byte(pic), tl0, tid<<6|0x20, hdr, 0xAA, 0xBB)
}

type outPacket struct {
	seq      uint16
	ts       uint32
	pic      uint16
	tl0      uint8
	keyframe bool
}

func rewriteOne(t *testing.T, r *Rewriter, pkt []byte, now time.Duration) (outPacket, bool) {
	t.Helper()
	h, ok := ParseRTP(pkt)
	if !ok {
		t.Fatal("test packet invalid")
	}
	f, ok := ParseVP8(h.Payload(pkt))
	if !ok {
		t.Fatal("test payload invalid")
	}
	m, ok := r.Rewrite(&h, &f, h.Payload(pkt), now)
	if !ok {
		return outPacket{}, false
	}
	applyMapping(pkt, &h, &f, &m)
	h2, _ := ParseRTP(pkt)
	f2, _ := ParseVP8(h2.Payload(pkt))
	pic, _ := f2.PictureID(h2.Payload(pkt))
	tl0, _ := f2.TL0PicIdx(h2.Payload(pkt))
	return outPacket{h2.Seq, h2.Timestamp, pic, tl0, f2.Keyframe}, true
}

func TestRewriterSimulcastSwitchAndTemporalDrops(t *testing.T) {
	r := NewRewriter(90000)
	var got []outPacket
	now := time.Duration(0)
	// Source A: 10 frames, one packet each; TID pattern 0,2,1,2; TID 2 frames are dropped.
	seqA, tsA, picA, tl0A := uint16(65530), uint32(4000000000), uint16(0x7ffa), uint8(250)
	for i := 0; i < 10; i++ {
		tid := []uint8{0, 2, 1, 2}[i%4]
		if tid == 0 && i > 0 {
			tl0A++
		}
		pkt := vp8Packet(seqA, tsA, picA, tl0A, tid, i == 0, true)
		if tid == 2 {
			h, _ := ParseRTP(pkt)
			f, _ := ParseVP8(h.Payload(pkt))
			r.Drop(&h, &f, h.Payload(pkt), true)
		} else if o, ok := rewriteOne(t, r, pkt, now); ok {
			got = append(got, o)
		}
		seqA++
		tsA += 3000
		picA = (picA + 1) & 0x7fff
		now += 33 * time.Millisecond
	}
	// Switch to source B at its keyframe; B's numbering is unrelated.
	r.Switch()
	seqB, tsB, picB, tl0B := uint16(100), uint32(5), uint16(9), uint8(3)
	for i := 0; i < 4; i++ {
		if o, ok := rewriteOne(t, r, vp8Packet(seqB, tsB, picB, tl0B, 0, i == 0, true), now); ok {
			got = append(got, o)
		}
		seqB++
		tsB += 3000
		picB++
		tl0B++
		now += 33 * time.Millisecond
	}
	if len(got) != 9 {
		t.Fatalf("forwarded %d packets, want 9", len(got))
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if b.seq != a.seq+1 {
			t.Errorf("packet %d: seq %d after %d", i, b.seq, a.seq)
		}
		if b.pic != (a.pic+1)&0x7fff {
			t.Errorf("packet %d: picture id %d after %d", i, b.pic, a.pic)
		}
		if int32(b.ts-a.ts) <= 0 || int32(b.ts-a.ts) > 7000 {
			t.Errorf("packet %d: timestamp step %d", i, int32(b.ts-a.ts))
		}
	}
	// TL0PICIDX grows by one per base-layer frame, across the switch too.
	if got[5].tl0 != got[4].tl0+1 || !got[5].keyframe {
		t.Errorf("switch: tl0 %d after %d, keyframe %v", got[5].tl0, got[4].tl0, got[5].keyframe)
	}
}

// applyMapping writes a mapping into a whole packet, as a down-track sends it.
func applyMapping(pkt []byte, h *Header, f *Flags, m *Mapping) {
	SetSeq(pkt, m.OutSeq)
	SetTimestamp(pkt, m.Timestamp(h.Timestamp))
	m.WritePayload(f, pkt[h.PayloadStart:h.PayloadEnd])
}

// TestRewriterLeavesThePayloadAlone: Rewrite only decides; the payload changes only where the
// caller writes the mapping, and only when the mapping says it rewrites it.
func TestRewriterLeavesThePayloadAlone(t *testing.T) {
	r := NewRewriter(90000)
	r.Switch()
	first := vp8Packet(10, 1000, 5, 1, 0, true, true)
	h, _ := ParseRTP(first)
	f, _ := ParseVP8(h.Payload(first))
	if _, ok := r.Rewrite(&h, &f, h.Payload(first), 0); !ok {
		t.Fatal("refused")
	}
	// A new source: its picture ids are renumbered to follow on.
	r.Switch()
	pkt := vp8Packet(500, 90000, 900, 40, 0, true, true)
	orig := append([]byte(nil), pkt...)
	h, _ = ParseRTP(pkt)
	f, _ = ParseVP8(h.Payload(pkt))
	m, ok := r.Rewrite(&h, &f, h.Payload(pkt), 0)
	if !ok || string(orig) != string(pkt) {
		t.Fatal("Rewrite changed the packet it was given")
	}
	if !m.RewritesPayload() || m.PicID != 6 || m.TL0 != 2 || m.OutSeq != 11 {
		t.Fatalf("mapping %+v, want picture id 6, TL0PICIDX 2, sequence 11", m)
	}
	applyMapping(pkt, &h, &f, &m)
	f2, _ := ParseVP8(h.Payload(pkt))
	if pic, _ := f2.PictureID(h.Payload(pkt)); pic != 6 {
		t.Fatalf("written picture id %d", pic)
	}
	opus := Mapping{OutSeq: 3}
	if opus.RewritesPayload() {
		t.Fatal("a mapping without picture ids rewrites a payload")
	}
}

func TestRewriterSwitchBeforeTheFirstPacket(t *testing.T) {
	r := NewRewriter(90000)
	r.Switch() // a down-track switches onto its first source before anything was forwarded
	a, _ := rewriteOne(t, r, vp8Packet(500, 10, 77, 3, 0, true, true), 0)
	b, _ := rewriteOne(t, r, vp8Packet(501, 10, 77, 3, 0, false, false), 0)
	if a.seq != 500 || b.seq != 501 || a.pic != 77 || b.pic != 77 || a.ts != b.ts {
		t.Fatalf("first frame rewritten as %+v, %+v", a, b)
	}
}
