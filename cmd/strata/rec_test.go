package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pion/rtp"
)

// silenceRecording writes a recording of n 20 ms Opus silence frames by hand.
func silenceRecording(t *testing.T, n int) string {
	t.Helper()
	var b bytes.Buffer
	info := `{"t":"a","c":"opus","s":1,"u":2}`
	b.WriteString("MJR00002")
	binary.Write(&b, binary.BigEndian, uint16(len(info)))
	b.WriteString(info)
	for i := 0; i < n; i++ {
		p, err := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: uint16(i), Timestamp: 960 * uint32(i), SSRC: 1},
			Payload: []byte{0xf8, 0xff, 0xfe}}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		binary.Write(&b, binary.BigEndian, []byte("MEET"))
		binary.Write(&b, binary.BigEndian, uint32(20*i))
		binary.Write(&b, binary.BigEndian, uint16(len(p)))
		b.Write(p)
	}
	path := filepath.Join(t.TempDir(), "rec.mjr")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRecConvert(t *testing.T) {
	in := silenceRecording(t, 50)
	out := filepath.Join(t.TempDir(), "rec.opus")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"rec", "convert", in, out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := "opus: starts at 0.000 s, 1.000 s, 50 packets, 50 frames, 0 dropped, 0 gaps, 0 silence frames"; !strings.Contains(stdout.String(), want) {
		t.Fatalf("said %q, want %q", stdout.String(), want)
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.HasPrefix(b, []byte("OggS")) {
		t.Fatalf("output: %v, %.8q", err, b)
	}
}

func TestRecConvertRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"rec"}, 2, "usage: strata rec convert"},
		{[]string{"rec", "play"}, 2, "usage: strata rec convert"},
		{[]string{"rec", "convert", "a.mjr"}, 2, "usage: strata rec convert"},
		{[]string{"rec", "convert", filepath.Join(dir, "nope.mjr"), filepath.Join(dir, "x.opus")}, 1, "no such file"},
		{[]string{"rec", "convert", "a.mjr", "a.mov"}, 1, "unknown format"},
		{[]string{"rec", "convert", silenceRecording(t, 1), filepath.Join(dir, "a.mp4")}, 0, ""},
		{[]string{"rec", "convert", silenceRecording(t, 1), silenceRecording(t, 1), filepath.Join(dir, "a.ogg")}, 1, "one Opus track"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Fatalf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
