package audio

import (
	"errors"
	"testing"
)

// toneFrames encodes frames 20 ms frames of a tone at format f and returns the packets.
func toneFrames(t testing.TB, f Format, c EncoderConfig, freq float64, frames int) [][]byte {
	t.Helper()
	enc, err := NewEncoder(f, c)
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, f.FrameLen())
	var pkts [][]byte
	idx := 0
	for i := 0; i < frames; i++ {
		idx = Tone(pcm, f.Channels, f.Rate, freq, 8000, idx)
		buf := make([]byte, MaxPacket)
		n, err := enc.Encode(pcm, buf)
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, buf[:n])
	}
	return pkts
}

func TestOpusRoundTripKeepsTheTone(t *testing.T) {
	for _, rate := range []int{8000, 12000, 16000, 24000, 48000} {
		for _, ch := range []int{1, 2} {
			f := Format{Rate: rate, Channels: ch}
			pkts := toneFrames(t, f, EncoderConfig{}, 600, 25)
			dec, err := NewDecoder(f)
			if err != nil {
				t.Fatal(err)
			}
			pcm := make([]int16, f.FrameLen())
			for _, p := range pkts {
				if err := dec.Decode(p, pcm); err != nil {
					t.Fatalf("%v: %v", f, err)
				}
			}
			on, off := ToneLevel(pcm, ch, ch-1, rate, 600), ToneLevel(pcm, ch, 0, rate, 1500)
			if on < 0.1 || off > on/10 {
				t.Errorf("%v: 600 Hz at %.3f, 1500 Hz at %.3f", f, on, off)
			}
		}
	}
}

func TestOpusRejectsBadInput(t *testing.T) {
	if _, err := NewDecoder(Format{Rate: 44100, Channels: 1}); err == nil {
		t.Error("44.1 kHz accepted")
	}
	if _, err := NewEncoder(Format{Rate: 16000, Channels: 3}, EncoderConfig{}); err == nil {
		t.Error("3 channels accepted")
	}
	if _, err := NewEncoder(Format{Rate: 16000, Channels: 1}, EncoderConfig{Complexity: 11}); err == nil {
		t.Error("complexity 11 accepted")
	}
	f := Format{Rate: 16000, Channels: 1}
	dec, _ := NewDecoder(f)
	pcm := make([]int16, f.FrameLen())
	// A TOC byte announcing a code-3 packet with more frames than it carries.
	if err := dec.Decode([]byte{0x03, 0xff, 0x01}, pcm); err == nil {
		t.Error("malformed packet decoded")
	}
	if err := dec.Decode(nil, pcm); err == nil {
		t.Error("empty packet decoded")
	}
	if err := dec.Decode([]byte{0xf8}, pcm[:10]); err == nil {
		t.Error("short buffer accepted")
	}
	// 40 ms in one packet: not a 20 ms frame.
	long := Format{Rate: 16000, Channels: 1}
	enc, err := NewEncoder(long, EncoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	two := make([]int16, 2*long.FrameLen())
	buf := make([]byte, MaxPacket)
	n, err := enc.enc.Encode(two, buf) // the wrapper encodes 20 ms frames only
	if err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(buf[:n], pcm); !errors.Is(err, ErrFrameDuration) {
		t.Errorf("40 ms packet: %v", err)
	}
	// The decoder still works after the refusals.
	for _, p := range toneFrames(t, f, EncoderConfig{}, 500, 3) {
		if err := dec.Decode(p, pcm); err != nil {
			t.Fatal(err)
		}
	}
}

// A lost frame decoded from the following packet's FEC data carries the tone, and the decoder
// goes on with the following packets.
func TestOpusFECRecoversALostFrame(t *testing.T) {
	f := Format{Rate: 16000, Channels: 1}
	pkts := toneFrames(t, f, EncoderConfig{Bitrate: 32000, FEC: true, ExpectedLoss: 20}, 700, 30)
	dec, _ := NewDecoder(f)
	pcm := make([]int16, f.FrameLen())
	for i, p := range pkts {
		if i == 20 {
			if err := dec.DecodeFEC(pkts[21], pcm); err != nil {
				t.Fatal(err)
			}
			if l := ToneLevel(pcm, 1, 0, f.Rate, 700); l < 0.05 {
				t.Fatalf("FEC frame tone level %.3f", l)
			}
			continue
		}
		if err := dec.Decode(p, pcm); err != nil {
			t.Fatal(err)
		}
	}
	if err := dec.Conceal(pcm); err != nil {
		t.Fatal(err)
	}
}
