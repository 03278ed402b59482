package sfu

import (
	"encoding/binary"
	"testing"

	"github.com/strata-rtc/strata/internal/media"
)

// seqSink records the sequence numbers it is given.
type seqSink struct{ seqs []uint16 }

func (s *seqSink) WriteRTP(p *Packet) { s.seqs = append(s.seqs, p.Header.Seq) }
func (s *seqSink) Resync()            {}

func vp8At(seq uint16, key bool) []byte {
	b := make([]byte, 16)
	b[0], b[1] = 0x80, 96
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint32(b[4:], uint32(seq)*3000)
	binary.BigEndian.PutUint32(b[8:], 77)
	b[12], b[13] = 0x10, 0x01 // S, interframe
	if key {
		b[13] = 0x00
	}
	return b
}

// TestAddSinkFromKeyframe: a sink added from the keyframe gets, at the next packet, the cached
// packets from the newest keyframe on, then that packet and the live ones, in order; a sink
// removed before its replay gets nothing; a simulcast receiver adds the sink at once.
func TestAddSinkFromKeyframe(t *testing.T) {
	r := NewReceiver(ReceiverConfig{Codec: media.CodecVP8}, nil)
	for seq := uint16(1); seq <= 20; seq++ {
		r.WriteRTP(0, vp8At(seq, seq == 5 || seq == 12), Now())
	}
	s, gone := &seqSink{}, &seqSink{}
	r.AddSinkFromKeyframe(s)
	r.AddSinkFromKeyframe(gone)
	r.RemoveSink(gone)
	if len(s.seqs) != 0 {
		t.Fatal("replayed before the next packet")
	}
	r.WriteRTP(0, vp8At(21, false), Now())
	r.WriteRTP(0, vp8At(22, false), Now())
	want := []uint16{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22}
	if len(s.seqs) != len(want) {
		t.Fatalf("got %v, want %v", s.seqs, want)
	}
	for i := range want {
		if s.seqs[i] != want[i] {
			t.Fatalf("got %v, want %v", s.seqs, want)
		}
	}
	if len(gone.seqs) != 0 {
		t.Errorf("a removed sink got %v", gone.seqs)
	}
	sim := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	sim.AddSinkFromKeyframe(s)
	if len(sim.Sinks()) != 1 {
		t.Error("a simulcast receiver did not add the sink at once")
	}
}
