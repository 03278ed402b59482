package audio

import (
	"errors"
	"testing"
)

// FuzzG711Decode feeds arbitrary payloads to a G.711 decoder into a stereo wideband room: a
// payload of any length other than 20 ms is refused with ErrFrameDuration, a 20 ms one always
// decodes (every byte is a G.711 code), and nothing panics.
func FuzzG711Decode(f *testing.F) {
	f.Add(false, make([]byte, G711Samples))
	f.Add(true, make([]byte, G711Samples-1))
	f.Add(true, []byte{})
	f.Add(false, make([]byte, 2*G711Samples))
	fm := Format{Rate: 24000, Channels: 2}
	pcm := make([]int16, fm.FrameLen())
	f.Fuzz(func(t *testing.T, alaw bool, pkt []byte) {
		law := ULaw
		if alaw {
			law = ALaw
		}
		dec, err := NewG711Decoder(fm, law)
		if err != nil {
			t.Fatal(err)
		}
		err = dec.Decode(pkt, pcm)
		if (len(pkt) == G711Samples) != (err == nil) {
			t.Fatalf("%d bytes: %v", len(pkt), err)
		}
		if err != nil && !errors.Is(err, ErrFrameDuration) {
			t.Fatalf("%d bytes: %v, want ErrFrameDuration", len(pkt), err)
		}
		if err := dec.Conceal(pcm); err != nil {
			t.Fatal(err)
		}
	})
}
