package audio

import (
	"encoding/binary"
	"testing"
)

// FuzzJitter drives a jitter buffer with arbitrary packets and pulls: it never panics, never holds
// more than its ring, and every frame it hands out is consistent.
func FuzzJitter(f *testing.F) {
	f.Add(uint8(6), []byte{0, 1, 0, 0, 0, 0, 3, 1, 0, 2, 0, 0, 3, 192, 1})
	f.Add(uint8(0), []byte{255, 255, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(1), []byte{1, 0, 0, 0, 0, 0, 0, 128, 0, 0, 0, 0, 0, 1, 0, 127, 255, 0, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, prebuffer uint8, in []byte) {
		j := NewJitter(int(prebuffer), opusFrameTS)
		payload := make([]byte, MaxPacket+8)
		for len(in) >= 8 {
			seq := binary.LittleEndian.Uint16(in)
			ts := binary.LittleEndian.Uint32(in[2:])
			n := int(binary.LittleEndian.Uint16(in[6:])) % (len(payload) + 1)
			in = in[8:]
			if seq%3 == 0 {
				fr := j.Pull()
				switch fr.Kind {
				case Packet:
					if len(fr.Payload) == 0 || len(fr.Payload) > MaxPacket {
						t.Fatalf("payload of %d bytes", len(fr.Payload))
					}
				case Lost:
					if fr.Payload != nil || len(fr.FEC) > MaxPacket {
						t.Fatalf("lost frame %+v", fr)
					}
				}
				continue
			}
			j.Push(seq, ts, payload[:n])
			if j.Len() > len(j.ring) || j.Len() < 0 {
				t.Fatalf("%d queued in a ring of %d", j.Len(), len(j.ring))
			}
		}
		// Draining ends: pulls play or conceal everything queued, or the buffer is (back to)
		// prebuffering, holding no more than the prebuffer.
		for i := 0; i <= len(j.ring)+1; i++ {
			j.Pull()
		}
		if j.Len() != 0 && (!j.Prebuffering() || j.Len() > j.prebuffer) {
			t.Fatalf("%d left after draining (prebuffering %v)", j.Len(), j.Prebuffering())
		}
	})
}
