package playable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
)

func TestReorder(t *testing.T) {
	var r reorder
	ms := time.Millisecond
	var got []int64
	var gaps []bool
	add := func(seq uint16, at time.Duration) bool {
		ok := r.add(seq, []byte{byte(seq)}, at)
		for r.ready(at) {
			p, gap := r.pop()
			got, gaps = append(got, p.seq), append(gaps, gap)
			r.recycle([][]byte{p.b})
		}
		return ok
	}
	// Across the wrap, one late by two places, a copy, a loss (65534+5 = 3 missing).
	for i, s := range []uint16{65534, 0, 65535, 1, 1, 2, 4} {
		want := !(i == 4) // the copy
		if ok := add(s, time.Duration(i)*10*ms); ok != want {
			t.Fatalf("add(%d) = %v", s, ok)
		}
	}
	if len(got) != 0 {
		t.Fatalf("released %v before the window passed", got)
	}
	add(5, time.Second)                    // releases everything older than 500 ms
	if ok := add(65533, time.Second); ok { // its place was passed
		t.Fatal("a packet older than those released was taken")
	}
	want := []int64{65534, 65535, 65536, 65537, 65538, 65540}
	if len(got) != len(want) {
		t.Fatalf("released %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] || gaps[i] != (i == 5) {
			t.Fatalf("released %v gaps %v, want %v with a gap before 65540", got, gaps, want)
		}
	}
}

func packet(seq uint16, ts uint32, ssrc uint32, marker bool, payload []byte) []byte {
	b, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: ts, SSRC: ssrc, Marker: marker},
		Payload: payload}).Marshal()
	return b
}

// vp8Frame is a one-packet VP8 frame: a keyframe of 64x48, or an interframe.
func vp8Frame(key bool) []byte {
	if key {
		return []byte{0x10, 0x00, 0x00, 0x00, 0x9d, 0x01, 0x2a, 64, 0, 48, 0, 0xaa}
	}
	return []byte{0x10, 0x01, 0x00, 0x00, 0xbb}
}

// Video that never sends a keyframe is left out; the audio is written. A track added after the
// header is refused; codecs are checked against the format.
func TestWriterLeavesOutVideoWithoutKeyframe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.webm")
	w, err := New(path, Track{Codec: media.CodecOpus}, Track{Codec: media.CodecVP8})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		at := time.Duration(i) * 20 * time.Millisecond
		w.Packet(0, packet(uint16(i), uint32(960*i), 1, false, []byte{0xf8, 0xff, 0xfe}), at)
		w.Packet(1, packet(uint16(i), uint32(1800*i), 2, true, vp8Frame(false)), at)
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.LeftOut != 1 || st.Tracks[0].Frames != 100 || st.Tracks[1].Frames != 0 || st.Tracks[1].Skipped != 100 {
		t.Fatalf("stats %+v", st)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() < 300 {
		t.Fatalf("file %v %v", fi, err)
	}
	if _, err := New(filepath.Join(t.TempDir(), "a.mp4"), Track{Codec: media.CodecVP8}); err == nil || !strings.Contains(err.Error(), "vp8 does not fit in mp4") {
		t.Fatalf("VP8 into MP4: %v", err)
	}
	if _, err := New(filepath.Join(t.TempDir(), "nodir", "a.webm"), Track{Codec: media.CodecVP8}); err == nil {
		t.Fatal("created a file in a missing directory")
	}
}

// A new SSRC restarts the track's clock where the packets arrive; video waits for a keyframe.
func TestWriterNewSSRC(t *testing.T) {
	w, err := New(filepath.Join(t.TempDir(), "v.webm"), Track{Codec: media.CodecVP8})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		ssrc, seq, ts := uint32(1), uint16(i), uint32(3000*i)
		if i >= 30 {
			ssrc, seq, ts = 2, uint16(5000+i), uint32(777777+3000*i)
		}
		w.Packet(0, packet(seq, ts, ssrc, true, vp8Frame(i%10 == 0)), time.Duration(i)*time.Second/30)
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	v := st.Tracks[0]
	if v.Frames != 60 || v.Gaps != 1 || v.KeyframeWaits != 2 || v.Duration < 1900*time.Millisecond || v.Duration > 2100*time.Millisecond {
		t.Fatalf("stats %+v", v)
	}
}

// A full disk (/dev/full) is an error of Write's or Close's, never a hang, in every format.
func TestFullDisk(t *testing.T) {
	for _, ext := range []string{".webm", ".opus", ".mp4"} {
		path := filepath.Join(t.TempDir(), "full"+ext)
		if err := os.Symlink("/dev/full", path); err != nil {
			t.Fatal(err)
		}
		w, err := New(path, Track{Codec: media.CodecOpus})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3000; i++ {
			w.Packet(0, packet(uint16(i), uint32(960*i), 1, false, []byte{0xf8, 0xff, 0xfe}), time.Duration(i)*20*time.Millisecond)
		}
		if _, err := w.Close(); err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("%s: Close said %v", ext, err)
		}
	}
}

// Padding-only packets (bandwidth probes on the media SSRC) between frames change nothing.
func TestPaddingBetweenFrames(t *testing.T) {
	w, err := New(filepath.Join(t.TempDir(), "p.webm"), Track{Codec: media.CodecVP8})
	if err != nil {
		t.Fatal(err)
	}
	seq := uint16(0)
	for i := 0; i < 30; i++ {
		w.Packet(0, packet(seq, uint32(3000*i), 1, true, vp8Frame(i == 0)), time.Duration(i)*time.Second/30)
		seq++
		pad, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: uint32(3000 * i),
			SSRC: 1, Padding: true}, PaddingSize: 200}).Marshal()
		w.Packet(0, pad, time.Duration(i)*time.Second/30+time.Millisecond)
		seq++
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if v := st.Tracks[0]; v.Frames != 30 || v.Skipped != 0 || v.Gaps != 0 || v.Dropped != 0 {
		t.Fatalf("stats %+v", v)
	}
}

// The layer frames of a VP9 picture (spatial layers) become one superframe with its index.
func TestVP9Superframe(t *testing.T) {
	d := &vp9Depacketizer{}
	l0, l1a, l1b := make([]byte, 300), []byte{7, 7}, []byte{8, 8, 8}
	var buf []byte
	var err error
	// I=0, P=0, L=0, F=0, B/E flags.
	for _, p := range [][]byte{append([]byte{0x0c}, l0...), append([]byte{0x08}, l1a...), append([]byte{0x04}, l1b...)} {
		if buf, err = d.add(buf, p); err != nil {
			t.Fatal(err)
		}
	}
	out, err := d.frame(buf)
	if err != nil {
		t.Fatal(err)
	}
	// 300 needs two bytes: marker 0b110_01_001 (mag 2, 2 frames).
	idx := []byte{0xc9, 0x2c, 0x01, 0x05, 0x00, 0xc9}
	if len(out) != 305+len(idx) || string(out[305:]) != string(idx) {
		t.Fatalf("superframe index % x", out[305:])
	}
	if out, _ := d.frame(append([]byte(nil), l0...)); len(out) != 300 {
		t.Fatalf("a single layer frame became %d bytes", len(out))
	}
}
