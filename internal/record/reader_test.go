package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
)

// mjrFile builds a recording by hand: the magic, the info header (none if empty) and frames,
// each a frame magic (with its time) and contents.
func mjrFile(magic, info string, frames ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	if info != "" {
		binary.Write(&b, binary.BigEndian, uint16(len(info)))
		b.WriteString(info)
	}
	for _, f := range frames {
		b.Write(f)
	}
	return b.Bytes()
}

// mjrFrame is one frame: head ("MEET" and a time, or "MEETECHO"), a length and contents.
func mjrFrame(head []byte, contents []byte) []byte {
	b := append([]byte{}, head...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(contents)))
	return append(b, contents...)
}

func meet(ms uint32) []byte { return binary.BigEndian.AppendUint32([]byte(frameMagic), ms) }

const goodInfo = `{"t":"a","c":"opus","x":{"1":"urn:ietf:params:rtp-hdrext:ssrc-audio-level"},"s":1700000000000000,"u":1700000000020000}`

// rtpPacket is a minimal Opus packet numbered seq.
func rtpPacket(t testing.TB, seq uint16, payload ...byte) []byte {
	t.Helper()
	b, err := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: seq, Timestamp: 960 * uint32(seq), SSRC: 7},
		Payload: payload}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readAll reads every frame of a recording, copying them.
func readAll(t testing.TB, r *MJRReader) []Frame {
	t.Helper()
	var out []Frame
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Frame{RTP: bytes.Clone(f.RTP), At: f.At})
	}
}

// What strata records reads back whole: the header it wrote, the payloads in the order they were
// sent, the times they came.
func TestReadBackARecording(t *testing.T) {
	frames := opusTone(t, 440, 1)
	r := newRecorded(t, media.CodecOpus, WithExtension(1, audioLevelURI), WithDescription("mic"))
	s := &stream{pt: 111, ssrc: 0x1234, seq: 65000, ts: 1000, step: 960}
	var sent [][]byte
	for _, f := range frames {
		sent = append(sent, s.packet(t, f, false))
	}
	r.play(sent, 0, 20*time.Millisecond)
	before := time.Now()
	r.close(t)

	m, err := OpenMJR(r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	info := m.Info()
	if info.Version != 2 || info.Type != "a" || info.Codec != "opus" || info.Description != "mic" ||
		info.Extensions[1] != audioLevelURI || len(info.Extensions) != 1 {
		t.Fatalf("info %+v", info)
	}
	if info.Created.After(before) || info.FirstPacket.Before(info.Created) {
		t.Fatalf("created %v, first packet %v, closed after %v", info.Created, info.FirstPacket, before)
	}
	got := readAll(t, m)
	if len(got) != len(frames) {
		t.Fatalf("read %d frames, sent %d", len(got), len(frames))
	}
	for i, f := range got {
		var p rtp.Packet
		if err := p.Unmarshal(f.RTP); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(p.Payload, frames[i]) {
			t.Fatalf("frame %d: payload differs from what was sent", i)
		}
		if p.SequenceNumber != uint16(65000+i) {
			t.Fatalf("frame %d: sequence number %d, want %d", i, p.SequenceNumber, uint16(65000+i))
		}
		if f.At != time.Duration(i)*20*time.Millisecond {
			t.Fatalf("frame %d at %v, want %v", i, f.At, time.Duration(i)*20*time.Millisecond)
		}
	}
}

// The formats before MJR00002 read too: MJR00001 (frames without a time) and the oldest, whose
// header frame says "audio" or "video".
func TestReadOlderFormats(t *testing.T) {
	p1, p2 := rtpPacket(t, 1, 0xaa), rtpPacket(t, 2, 0xbb)
	echo := []byte(oldestMagic)
	for _, tc := range []struct {
		name, typ, codec string
		file             []byte
	}{
		{"MJR00001", "a", "opus", mjrFile(legacyMagic, goodInfo, mjrFrame(echo, p1), mjrFrame(echo, p2))},
		{"oldest audio", "a", "opus", mjrFile("", "", mjrFrame(echo, []byte("audio")), mjrFrame(echo, p1), mjrFrame(echo, p2))},
		{"oldest video", "v", "vp8", mjrFile("", "", mjrFrame(echo, []byte("video")), mjrFrame(echo, p1), mjrFrame(echo, p2))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMJRReader(bytes.NewReader(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if i := m.Info(); i.Version != 1 || i.Type != tc.typ || i.Codec != tc.codec {
				t.Fatalf("info %+v", i)
			}
			got := readAll(t, m)
			if len(got) != 2 || !bytes.Equal(got[0].RTP, p1) || !bytes.Equal(got[1].RTP, p2) || got[1].At != 0 {
				t.Fatalf("frames %v", got)
			}
		})
	}
}

// A data recording's frames start with their time, in µs since the epoch; the reader gives the
// message and its time since the recording was created.
func TestReadDataRecording(t *testing.T) {
	msg := binary.BigEndian.AppendUint64(nil, 1700000000000000+1500000)
	msg = append(msg, "hello"...)
	file := mjrFile(fileMagic, `{"t":"d","c":"text","s":1700000000000000,"u":1700000000000000}`, mjrFrame(meet(0), msg))
	m, err := NewMJRReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, m)
	if len(got) != 1 || string(got[0].RTP) != "hello" || got[0].At != 1500*time.Millisecond {
		t.Fatalf("frames %+v", got)
	}
}

// A header that another recording's start left mid-file is skipped, as janus-pp-rec skips it.
func TestReadSkipsAHeaderInside(t *testing.T) {
	p := rtpPacket(t, 1, 0xaa)
	file := mjrFile(fileMagic, goodInfo, mjrFrame([]byte(fileMagic), []byte(goodInfo)), mjrFrame(meet(20), p))
	m, err := NewMJRReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m); len(got) != 1 || !bytes.Equal(got[0].RTP, p) || got[0].At != 20*time.Millisecond {
		t.Fatalf("frames %+v", got)
	}
}

func TestReadRefusesBadHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty file", nil, "empty file"},
		{"short magic", []byte("MJR0"), "not a recording"},
		{"wrong magic", []byte("RIFF1234abcd"), `starts with "RIFF1234"`},
		{"no info length", []byte(fileMagic + "\x01"), "info header cut short"},
		{"empty info", mjrFile(fileMagic, "", []byte{0, 0}), "info header is empty"},
		{"info too long", mjrFile(fileMagic, "", []byte{0xff, 0xff}), "info header of 65535 bytes"},
		{"info cut short", mjrFile(fileMagic, "", []byte{0, 10, '{'}), "info header cut short"},
		{"bad JSON", mjrFile(fileMagic, `{"t":`), "info header: unexpected end of JSON"},
		{"no type", mjrFile(fileMagic, `{"c":"opus","s":1,"u":2}`), "type (t) missing"},
		{"bad type", mjrFile(fileMagic, `{"t":"x","c":"opus","s":1,"u":2}`), "type (t) missing or not a, v or d"},
		{"no codec", mjrFile(fileMagic, `{"t":"a","s":1,"u":2}`), "codec (c) missing"},
		{"no times", mjrFile(fileMagic, `{"t":"a","c":"opus"}`), "times (s and u) missing"},
		{"float time", mjrFile(fileMagic, `{"t":"a","c":"opus","s":1.5,"u":2}`), "info header: json"},
		{"bad extension", mjrFile(fileMagic, `{"t":"a","c":"opus","s":1,"u":2,"x":{"one":"urn"}}`), `extension id "one"`},
		{"oldest, wrong kind", mjrFile("", "", mjrFrame([]byte(oldestMagic), []byte("hello"))), `header "hello"`},
		{"oldest, wrong length", mjrFile("", "", mjrFrame([]byte(oldestMagic), []byte("hi"))), "header of 2 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMJRReader(bytes.NewReader(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestReadRefusesBadFrames(t *testing.T) {
	p := rtpPacket(t, 1, 0xaa)
	for _, tc := range []struct {
		name   string
		frames []byte
		want   string
		cut    bool // the error wraps io.ErrUnexpectedEOF
	}{
		{"wrong frame magic", mjrFrame([]byte("MOOT\x00\x00\x00\x00"), p), `offset 151 starts with "MOOT`, false},
		{"frame header cut", meet(0)[:5], "frame header cut short", true},
		{"length cut", append(meet(0), 0), "frame header cut short", true},
		{"packet cut", mjrFrame(meet(0), p)[:15], "frame at offset 151 cut short", true},
		{"too short for RTP", mjrFrame(meet(0), p[:11]), "11 bytes, not an RTP packet", false},
		{"too long for RTP", mjrFrame(meet(0), make([]byte, 1501)), "1501 bytes, not an RTP packet", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := mjrFile(fileMagic, goodInfo, mjrFrame(meet(0), p), tc.frames)
			m, err := NewMJRReader(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			if f, err := m.Next(); err != nil || !bytes.Equal(f.RTP, p) {
				t.Fatalf("first frame: %v", err)
			}
			_, err = m.Next()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to say %q", err, tc.want)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) != tc.cut {
				t.Fatalf("error %v: wraps io.ErrUnexpectedEOF: %v, want %v", err, !tc.cut, tc.cut)
			}
		})
	}
}

// A recording closed before its first packet, and a missing file, say so.
func TestOpenMJRWithoutMedia(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.mjr")
	m, err := NewMJR(path, media.CodecOpus)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenMJR(path); !errors.Is(err, ErrNoMedia) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want ErrNoMedia naming the file", err)
	}
	if _, err := OpenMJR(filepath.Join(dir, "nope.mjr")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v, want a missing file", err)
	}
}

// FuzzMJRReader reads arbitrary bytes as a recording: it errs or reads, never panics, and a frame
// it returns is within the limits it promises.
func FuzzMJRReader(f *testing.F) {
	r := newRecorded(f, media.CodecOpus, WithExtension(1, audioLevelURI))
	s := &stream{pt: 111, ssrc: 9, seq: 1, step: 960}
	var pkts [][]byte
	for _, fr := range opusTone(f, 440, 0.2) {
		pkts = append(pkts, s.packet(f, fr, false))
	}
	r.play(pkts, 0, 20*time.Millisecond)
	r.close(f)
	rec, err := os.ReadFile(r.path)
	if err != nil {
		f.Fatal(err)
	}
	p := rtpPacket(f, 1, 0xaa)
	echo := []byte(oldestMagic)
	f.Add(rec)
	f.Add(rec[:len(rec)-7])
	f.Add([]byte(fileMagic))
	f.Add(mjrFile(legacyMagic, goodInfo, mjrFrame(echo, p)))
	f.Add(mjrFile("", "", mjrFrame(echo, []byte("video")), mjrFrame(echo, p)))
	f.Add(mjrFile(fileMagic, `{"t":"d","c":"binary","s":1,"u":1}`, mjrFrame(meet(3), append(make([]byte, 8), 'x'))))
	f.Add(mjrFile(fileMagic, goodInfo, mjrFrame([]byte(fileMagic), []byte(goodInfo)), mjrFrame(meet(20), p)))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := NewMJRReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		if i := m.Info(); i.Type != "a" && i.Type != "v" && i.Type != "d" || i.Codec == "" {
			t.Fatalf("accepted info %+v", i)
		}
		for n := 0; ; n++ {
			fr, err := m.Next()
			if err != nil {
				return
			}
			if m.Info().Type != "d" && (len(fr.RTP) < minRTP || len(fr.RTP) > maxRTP) {
				t.Fatalf("frame %d of %d bytes", n, len(fr.RTP))
			}
			if n > len(b) {
				t.Fatal("more frames than bytes")
			}
		}
	})
}
