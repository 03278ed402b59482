package media

import (
	"testing"
	"time"
)

func BenchmarkParseRTPAndVP8(b *testing.B) {
	pkt := append(vp8Packet(1, 1, 1, 1, 0, false, true), make([]byte, 1100)...)
	b.ReportAllocs()
	for b.Loop() {
		h, ok := ParseRTP(pkt)
		if !ok {
			b.Fatal("invalid")
		}
		if _, ok := ParseVP8(h.Payload(pkt)); !ok {
			b.Fatal("invalid payload")
		}
	}
}

func BenchmarkDependencyDescriptor(b *testing.B) {
	var d DDParser
	d.Parse(l1t3Structure(0, 1))
	desc := mandatoryOnly(true, true, 3, 7)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := d.Parse(desc); !ok {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkCacheStoreGet(b *testing.B) {
	c := NewCache(512, SlotSize)
	pkt := make([]byte, 1200)
	dst := make([]byte, SlotSize)
	b.ReportAllocs()
	seq := uint16(0)
	for b.Loop() {
		c.Store(seq, pkt, 0)
		c.Get(seq-100, dst)
		seq++
	}
}

// BenchmarkRewrite is the per-packet rewriting cost: parse, decide the mapping, write the VP8
// descriptor's picture id and TL0PICIDX.
func BenchmarkRewrite(b *testing.B) {
	r := NewRewriter(90000)
	pkt := append(vp8Packet(1, 1, 1, 1, 0, true, true), make([]byte, 1100)...)
	b.ReportAllocs()
	seq, ts, pic := uint16(1), uint32(1), uint16(1)
	for b.Loop() {
		SetSeq(pkt, seq)
		SetTimestamp(pkt, ts)
		h, _ := ParseRTP(pkt)
		f, _ := ParseVP8(h.Payload(pkt))
		f.SetPictureID(h.Payload(pkt), pic)
		if seq%7 == 0 {
			r.Drop(&h, &f, h.Payload(pkt), true)
		} else {
			m, _ := r.Rewrite(&h, &f, h.Payload(pkt), time.Duration(seq)*time.Millisecond)
			m.WritePayload(&f, h.Payload(pkt))
		}
		seq++
		ts += 3000
		pic = (pic + 1) & 0x7fff
	}
}
