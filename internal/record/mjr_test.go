package record

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

func TestNewMJRRefusesWhatItCannotRecord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		codec      media.Codec
		opts       []Option
		want       string
	}{
		{"missing directory", filepath.Join(dir, "nope", "a.mjr"), media.CodecOpus, nil, "directory " + filepath.Join(dir, "nope") + " for a.mjr does not exist"},
		{"directory is a file", filepath.Join(file, "a.mjr"), media.CodecOpus, nil, "is not a directory"},
		{"unknown codec", filepath.Join(dir, "a.mjr"), media.CodecUnknown, nil, "unknown codec"},
		{"header too long", filepath.Join(dir, "a.mjr"), media.CodecVP8, []Option{WithDescription(strings.Repeat("x", 1500))}, "exceeds the 1499 janus-pp-rec reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMJR(tc.path, tc.codec, tc.opts...)
			if err == nil {
				m.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// A recording closed before any packet is the file magic alone, as Janus leaves one; closing
// again changes nothing; the file is readable by all, as Janus's.
func TestEmptyRecording(t *testing.T) {
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	path := filepath.Join(t.TempDir(), "empty.mjr")
	m, err := NewMJR(path, media.CodecOpus)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if string(b) != "MJR00002" || st.Mode().Perm() != os.FileMode(0o644&^umask) {
		t.Fatalf("file %q, mode %v", b, st.Mode())
	}
}

// packetOf is an sfu.Packet of an RTP packet, as a receiver hands it to its sinks.
func packetOf(t testing.TB, b []byte, at time.Duration) *sfu.Packet {
	t.Helper()
	h, ok := media.ParseRTP(b)
	if !ok {
		t.Fatal("bad packet")
	}
	return &sfu.Packet{Bytes: b, Header: h, Flags: media.NoLayers(), At: at}
}

// A disk that stops taking data (a FIFO nobody reads: the kernel blocks the writer once the pipe
// is full) makes the recording drop what does not fit in its ring, without ever blocking the
// media path, and count it; once the disk drains, everything accepted is in the file, intact.
func TestSlowDiskDropsAndCounts(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "slow.mjr")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	m, err := NewMJR(fifo, media.CodecOpus, WithSlots(16))
	if err != nil {
		t.Fatal(err)
	}
	const sent = 3000 // 3 MB: far more than the pipe, the file buffer and the ring hold
	s := &stream{pt: 111, ssrc: 5, step: 960}
	payload := bytes.Repeat([]byte{0xfc}, 1000)
	base := sfu.Now()
	for i := 0; i < sent; i++ {
		m.WriteRTP(packetOf(t, s.packet(t, payload, false), base+time.Duration(i)*20*time.Millisecond))
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(reader)
		got <- b
	}()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "drained.mjr")
	if err := os.WriteFile(out, <-got, 0o644); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	t.Logf("stats %+v", st)
	if st.Dropped == 0 || st.Packets+st.Dropped != sent {
		t.Fatalf("stats %+v: want drops, and every one of the %d packets written or dropped", st, sent)
	}
	if fi, _ := os.Stat(out); uint64(fi.Size()) != st.Bytes {
		t.Fatalf("the reader got %d bytes, the recording wrote %d", fi.Size(), st.Bytes)
	}
	if frames := ppFrames(t, out); uint64(len(frames)) != st.Packets {
		t.Fatalf("janus-pp-rec parsed %d frames, the recording wrote %d", len(frames), st.Packets)
	}
}

// Close while the media path writes and the track is muted and resumed on other goroutines (run
// with -race): nothing races, Close returns once the packets it accepted are written, later
// packets are ignored, and the file holds exactly what Stats says.
func TestCloseWhileWriting(t *testing.T) {
	r := newRecorded(t, media.CodecOpus)
	s := &stream{pt: 111, ssrc: 9, step: 960}
	pkts := make([][]byte, 64)
	for i := range pkts {
		pkts[i] = s.packet(t, bytes.Repeat([]byte{0xfc, byte(i)}, 40), false)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the publisher's layer goroutine
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := pkts[i%len(pkts)]
			media.SetSeq(p, uint16(i))
			media.SetTimestamp(p, uint32(i)*960)
			r.recv.WriteRTP(0, p, r.base+time.Duration(i)*20*time.Millisecond)
		}
	}()
	go func() { // a moderator muting and unmuting
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r.recv.SetMuted(true)
			r.recv.SetMuted(false)
			_ = r.mjr.Stats()
		}
	}()
	for r.mjr.Stats().Packets < 200 {
		time.Sleep(time.Millisecond)
	}
	if err := r.mjr.Close(); err != nil {
		t.Fatal(err)
	}
	after := r.mjr.Stats()
	for r.recv.Stats().Packets < 2*uint64(after.Packets+after.Dropped) { // packets keep coming after Close
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if st := r.mjr.Stats(); st != after {
		t.Fatalf("stats changed after Close: %+v, then %+v", after, st)
	}
	if frames := ppFrames(t, r.path); uint64(len(frames)) != after.Packets {
		t.Fatalf("janus-pp-rec parsed %d frames, the recording wrote %d", len(frames), after.Packets)
	}
}

// WriteRTP allocates nothing, whether the packet goes into the ring or is dropped.
func TestWriteRTPAllocatesNothing(t *testing.T) {
	m, err := NewMJR(filepath.Join(t.TempDir(), "a.mjr"), media.CodecOpus, WithSlots(8))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := &stream{pt: 111, ssrc: 3, step: 960}
	p := packetOf(t, s.packet(t, make([]byte, 100), false), sfu.Now())
	m.WriteRTP(p) // the first packet writes the info header (JSON, allocated once)
	for m.Stats().Packets == 0 {
		time.Sleep(time.Millisecond)
	}
	if n := testing.AllocsPerRun(1000, func() { m.WriteRTP(p) }); n != 0 {
		t.Fatalf("%.1f allocations per packet", n)
	}
}

// BenchmarkMJRWriteRTP is the media path's cost of a recording. accepted: every packet goes into
// the ring (a large one, which the benchmark lets the writer empty, untimed, every half ring); flood:
// packets come as fast as the loop runs, faster than the writer can write, so most are dropped.
func BenchmarkMJRWriteRTP(b *testing.B) {
	for _, flood := range []bool{false, true} {
		name := "accepted"
		if flood {
			name = "flood"
		}
		b.Run(name, func(b *testing.B) {
			const slots = 1 << 14
			// The disk is not what is measured (and gigabytes would go to it).
			m, err := NewMJR(os.DevNull, media.CodecOpus, WithSlots(slots))
			if err != nil {
				b.Fatal(err)
			}
			s := &stream{pt: 111, ssrc: 3, step: 960}
			p := packetOf(b, s.packet(b, make([]byte, 120), false), sfu.Now())
			b.ReportAllocs()
			b.SetBytes(int64(len(p.Bytes)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !flood && i%(slots/2) == 0 {
					b.StopTimer()
					for m.ring.head.Load() != m.ring.tail.Load() {
						time.Sleep(10 * time.Microsecond)
					}
					b.StartTimer()
				}
				media.SetSeq(p.Bytes, uint16(i))
				m.WriteRTP(p)
			}
			b.StopTimer()
			if err := m.Close(); err != nil {
				b.Fatal(err)
			}
			st := m.Stats()
			if !flood && st.Dropped != 0 {
				b.Fatalf("%d packets dropped", st.Dropped)
			}
			b.ReportMetric(float64(st.Dropped)/float64(b.N), "dropped/op")
		})
	}
}
