package audio

import "testing"

// FuzzDecode feeds arbitrary payloads to the decoder as a participant's packets: it refuses or
// decodes them without panicking, and a good packet still decodes afterwards.
func FuzzDecode(f *testing.F) {
	fm := Format{Rate: 16000, Channels: 1}
	good := toneFrames(f, upFormat, EncoderConfig{FEC: true, ExpectedLoss: 10}, 440, 2)
	f.Add(good[0])
	f.Add([]byte{0x03, 0xff, 0x01})
	f.Add([]byte{0xfc, 0x00})
	f.Add([]byte{0x0b, 0x80, 0x81, 0x82})
	dec, err := NewDecoder(fm)
	if err != nil {
		f.Fatal(err)
	}
	pcm := make([]int16, fm.FrameLen())
	f.Fuzz(func(t *testing.T, pkt []byte) {
		_ = dec.Decode(pkt, pcm)
		_ = dec.DecodeFEC(pkt, pcm)
		if err := dec.Decode(good[1], pcm); err != nil {
			t.Fatalf("good packet after %x: %v", pkt, err)
		}
	})
}
