package siplab

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzNetstring: whatever baresip's control connection sends, the reader returns a message or an
// error, never panics or allocates beyond its limit.
func FuzzNetstring(f *testing.F) {
	for _, seed := range []string{
		`45:{"event":true,"type":"CALL_ESTABLISHED","param":""},`,
		`47:{"response":true,"ok":true,"data":"","token":"1"},`,
		"0:,", "3:abc", "x:abc,", "99999999999:", "-1:,", "2:ab;",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for range 4 {
			msg, err := readNetstring(r)
			if err != nil {
				return
			}
			if len(msg) > 1<<20 {
				t.Fatalf("message of %d bytes over the limit", len(msg))
			}
			cc := &ctrlConn{resps: map[string]ctrlResponse{}}
			cc.take(msg)
		}
	})
}

// FuzzReadWAV: a recording baresip is still writing, or any other bytes, read back as PCM or
// an error.
func FuzzReadWAV(f *testing.F) {
	dir := f.TempDir()
	good := filepath.Join(dir, "tone.wav")
	if err := writeToneWAV(good, 8000, 440, 1); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:100])
	f.Add(b[:44])
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEdata\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.wav")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := readWAV(path)
		if err != nil {
			return
		}
		if p.Channels <= 0 || p.Rate <= 0 || len(p.Samples) > len(data)/2 {
			t.Fatalf("read %d channels at %d Hz, %d samples from %d bytes", p.Channels, p.Rate, len(p.Samples), len(data))
		}
		_ = p.ToneLevel(440, 1)
	})
}

// TestReadWAVRoundTrip: the tone file baresip plays reads back as the tone.
func TestReadWAVRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tone.wav")
	if err := writeToneWAV(path, 48000, 1000, 2); err != nil {
		t.Fatal(err)
	}
	p, err := readWAV(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rate != 48000 || p.Channels != 1 || p.Duration() != 2 {
		t.Fatalf("read %d Hz × %d, %.2f s", p.Rate, p.Channels, p.Duration())
	}
	if l, o := p.ToneLevel(1000, 1), p.ToneLevel(440, 1); l < 0.4 || o > 0.01 {
		t.Fatalf("tone level %.3f at 1000 Hz, %.3f at 440 Hz", l, o)
	}
}
