package client

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/load/voice"
)

// FuzzListenerHear feeds a listener whatever a server might send as its mix: anything that is not
// an RTP packet with one 20 ms Opus frame is counted as an error, never a crash.
func FuzzListenerHear(f *testing.F) {
	b, err := voice.Default()
	if err != nil {
		f.Fatal(err)
	}
	rtp := func(payload []byte) []byte {
		return append([]byte{0x80, 111, 0, 1, 0, 0, 3, 0xc0, 0, 0, 0, 7}, payload...)
	}
	f.Add(rtp(b.Talk[0][10].Payload))
	f.Add(rtp(b.Quiet[0].Payload))
	f.Add(rtp([]byte{0xfc, 0xff, 0xfe}))    // a 60 ms packet
	f.Add([]byte{0xa0, 111, 0, 1, 0, 0, 0}) // padding, truncated
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		l, err := NewListener(func(time.Duration) voice.Expectation { return voice.Speech })
		if err != nil {
			t.Fatal(err)
		}
		l.Hear(pkt, 0)
		l.Hear(pkt, 20*time.Millisecond)
		c := l.Counts()
		if c.Decoded+c.Errors != 2 || c.SpeechFrames != c.Decoded || c.Audible > c.SpeechFrames {
			t.Fatalf("counts %+v", c)
		}
	})
}

func TestListenerSortsFramesByExpectation(t *testing.T) {
	b, err := voice.Default()
	if err != nil {
		t.Fatal(err)
	}
	expect := voice.Speech
	l, err := NewListener(func(time.Duration) voice.Expectation { return expect })
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range b.Talk[0][:100] {
		l.Hear(append([]byte{0x80, 111, 0, byte(i), 0, 0, 0, 0, 0, 0, 0, 7}, f.Payload...), 0)
	}
	expect = voice.Silence
	for i, f := range b.Quiet[:50] {
		l.Hear(append([]byte{0x80, 111, 1, byte(i), 0, 0, 0, 0, 0, 0, 0, 7}, f.Payload...), 0)
	}
	expect = voice.Unsure
	l.Hear(append([]byte{0x80, 111, 2, 0, 0, 0, 0, 0, 0, 0, 0, 7}, b.Quiet[0].Payload...), 0)
	c := l.Counts()
	if c.Decoded != 151 || c.Errors != 0 || c.SpeechFrames != 100 || c.SilenceFrames != 50 || c.SilenceAudible != 0 || c.Audible < 50 {
		t.Fatalf("counts %+v", c)
	}
	// A 48 kHz voice decoded at 16 kHz keeps its level; the quiet room stays near -70 dBov.
	if speech, quiet := c.SpeechDBSum/100, c.SilenceDBSum/50; speech < -45 || quiet > -60 {
		t.Fatalf("speech %.1f dBov, quiet %.1f dBov", speech, quiet)
	}
}
