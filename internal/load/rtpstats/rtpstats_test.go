package rtpstats

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// packet builds an RTP packet; for video, payload starts with a VP8 descriptor (15-bit picture id).
type packet struct {
	seq    uint16
	ts     uint32
	marker bool
	start  bool // first packet of a VP8 frame
	key    bool
}

func (p packet) bytes(kind Kind) []byte {
	b := make([]byte, 12, 40)
	b[0] = 0x80
	b[1] = 96
	if p.marker {
		b[1] |= 0x80
	}
	binary.BigEndian.PutUint16(b[2:], p.seq)
	binary.BigEndian.PutUint32(b[4:], p.ts)
	binary.BigEndian.PutUint32(b[8:], 0x1234)
	if kind == Audio {
		return append(b, make([]byte, 20)...)
	}
	desc := byte(0x80) // X
	if p.start {
		desc |= 0x10 // S, partition 0
	}
	hdr := byte(0x01) // inter frame
	if p.key {
		hdr = 0x00
	}
	return append(b, desc, 0x80, 0x80, 0x01, hdr, 0, 0, 0)
}

const frame = 33 * time.Millisecond

// videoFrames feeds n frames of k packets each, starting at seq0, one frame per 33 ms; frame i is
// a keyframe when isKey(i). skip drops packets by overall index.
func videoFrames(s *Stream, n, k int, seq0 uint16, t0 time.Duration, isKey func(int) bool, skip func(int) bool) (uint16, time.Duration) {
	seq, idx := seq0, 0
	for i := 0; i < n; i++ {
		at := t0 + time.Duration(i)*frame
		for j := 0; j < k; j++ {
			p := packet{seq: seq, ts: uint32(i) * 3000, marker: j == k-1, start: j == 0, key: isKey(i)}
			if skip == nil || !skip(idx) {
				if err := s.Observe(p.bytes(Video), at); err != nil {
					panic(err)
				}
			}
			seq++
			idx++
		}
	}
	return seq, t0 + time.Duration(n)*frame
}

func never(int) bool   { return false }
func first(i int) bool { return i == 0 }

func TestLossFromSequenceGaps(t *testing.T) {
	s := New(Config{Kind: Audio, ClockRate: 48000}, 0)
	for i := 0; i < 100; i++ {
		if i%10 == 3 {
			continue // 10 lost
		}
		p := packet{seq: uint16(i), ts: uint32(i * 960)}
		_ = s.Observe(p.bytes(Audio), time.Duration(i)*20*time.Millisecond)
	}
	got := s.Summarize(2 * time.Second)
	if got.Expected != 100 || got.Lost != 10 || math.Abs(got.LossRatio-0.1) > 1e-9 {
		t.Fatalf("expected 100 lost 10 (ratio 0.1), got %+v", got)
	}
}

func TestSequenceWrapAndReorderAreNotLoss(t *testing.T) {
	s := New(Config{Kind: Audio, ClockRate: 48000}, 0)
	order := []int{}
	for i := 0; i < 200; i += 2 {
		order = append(order, i+1, i) // every pair swapped
	}
	for n, i := range order {
		p := packet{seq: uint16(65400 + i), ts: uint32(i * 960)}
		_ = s.Observe(p.bytes(Audio), time.Duration(n)*20*time.Millisecond)
	}
	got := s.Summarize(4 * time.Second)
	if got.Expected != 200 || got.Lost != 0 {
		t.Fatalf("wrap + reorder: expected 200 lost 0, got expected %d lost %d", got.Expected, got.Lost)
	}
}

func TestJumpResyncsInsteadOfCountingLoss(t *testing.T) {
	s := New(Config{Kind: Audio, ClockRate: 48000}, 0)
	for i := 0; i < 50; i++ {
		_ = s.Observe(packet{seq: uint16(i), ts: uint32(i * 960)}.bytes(Audio), time.Duration(i)*20*time.Millisecond)
	}
	for i := 0; i < 50; i++ { // a new source far away in sequence space, with 5 lost
		if i == 10 || i == 11 || i == 12 || i == 13 || i == 14 {
			continue
		}
		_ = s.Observe(packet{seq: uint16(30000 + i), ts: uint32(i * 960)}.bytes(Audio), time.Duration(50+i)*20*time.Millisecond)
	}
	got := s.Summarize(2 * time.Second)
	if got.Resyncs != 1 || got.Lost != 5 || got.Expected != 100 {
		t.Fatalf("want 1 resync, 100 expected, 5 lost; got %+v", got)
	}
}

func TestJitter(t *testing.T) {
	// Packets every 20 ms; arrival alternates 2 ms early and 2 ms late, so |D| is 4 ms each time
	// and the RFC 3550 estimate converges to 4 ms.
	s := New(Config{Kind: Audio, ClockRate: 48000}, 0)
	for i := 0; i < 500; i++ {
		at := time.Duration(i)*20*time.Millisecond + 10*time.Millisecond
		if i%2 == 0 {
			at -= 2 * time.Millisecond
		} else {
			at += 2 * time.Millisecond
		}
		_ = s.Observe(packet{seq: uint16(i), ts: uint32(i * 960)}.bytes(Audio), at)
	}
	if j := s.Summarize(10 * time.Second).JitterMs; math.Abs(j-4) > 0.2 {
		t.Fatalf("jitter %.3f ms, want about 4", j)
	}
	steady := New(Config{Kind: Audio, ClockRate: 48000}, 0)
	for i := 0; i < 100; i++ {
		_ = steady.Observe(packet{seq: uint16(i), ts: uint32(i * 960)}.bytes(Audio), time.Duration(i)*20*time.Millisecond)
	}
	if j := steady.Summarize(2 * time.Second).JitterMs; j > 0.01 {
		t.Fatalf("jitter %.3f ms on a perfectly paced stream", j)
	}
}

func TestFramesKeyframesAndFPS(t *testing.T) {
	s := New(Config{Kind: Video, ClockRate: 90000}, 0)
	isKey := func(i int) bool { return i%30 == 0 }
	_, end := videoFrames(s, 90, 3, 100, 0, isKey, nil)
	got := s.Summarize(end)
	if got.Frames != 90 || got.Keyframes != 3 {
		t.Fatalf("frames %d keyframes %d, want 90 and 3", got.Frames, got.Keyframes)
	}
	if math.Abs(got.FPS-30.3) > 1 {
		t.Fatalf("fps %.1f, want about 30", got.FPS)
	}
	if got.Freezes != 0 || got.Lost != 0 || got.TTFFMs != 0 {
		t.Fatalf("clean stream: %+v", got)
	}
	wantKbps := float64(90*3*(12+8)) * 8 / end.Seconds() / 1000
	if math.Abs(got.KbitPerSec-wantKbps) > 0.01*wantKbps {
		t.Fatalf("kbit/s %.2f, want %.2f", got.KbitPerSec, wantKbps)
	}
}

func TestTimeToFirstFrameWaitsForKeyframe(t *testing.T) {
	start := 5 * time.Second
	s := New(Config{Kind: Video, ClockRate: 90000}, start)
	// Frames 0-9 are delta frames (joined mid-GOP); frame 10 is the first keyframe.
	t0 := start + 200*time.Millisecond
	_, end := videoFrames(s, 20, 2, 0, t0, func(i int) bool { return i == 10 }, nil)
	got := s.Summarize(end)
	want := float64(200*time.Millisecond+10*frame) / float64(time.Millisecond)
	if math.Abs(got.TTFFMs-want) > 0.001 {
		t.Fatalf("ttff %.1f ms, want %.1f", got.TTFFMs, want)
	}
	none := New(Config{Kind: Video, ClockRate: 90000}, 0)
	videoFrames(none, 10, 2, 0, 0, never, nil)
	if got := none.Summarize(time.Second); got.TTFFMs != -1 || got.Frames != 10 {
		t.Fatalf("no keyframe: want ttff -1 with 10 frames counted, got %+v", got)
	}
}

func TestLostFirstPacketOfKeyframeIsNotAKeyframe(t *testing.T) {
	s := New(Config{Kind: Video, ClockRate: 90000}, 0)
	videoFrames(s, 5, 3, 0, 0, first, func(idx int) bool { return idx == 0 })
	if got := s.Summarize(time.Second); got.Keyframes != 0 || got.Lost != 0 || s.Decodable() {
		// The first packet is lost before the first one seen, so it is not counted as lost either.
		t.Fatalf("keyframe without its first packet: %+v", got)
	}
}

func TestFreezes(t *testing.T) {
	s := New(Config{Kind: Video, ClockRate: 90000}, 0)
	seq, end := videoFrames(s, 30, 2, 0, 0, first, nil)
	// 800 ms of nothing, then frames again: one freeze of about 833 ms (gap between frames).
	seq, end = videoFrames(s, 30, 2, seq, end+800*time.Millisecond, never, nil)
	got := s.Summarize(end)
	if got.Freezes != 1 {
		t.Fatalf("freezes %d, want 1 (%+v)", got.Freezes, got)
	}
	if want := 833.0; math.Abs(got.FreezeMs-want) > 1 {
		t.Fatalf("freeze %.1f ms, want %.0f", got.FreezeMs, want)
	}
	// A stream that stopped counts its trailing gap as a freeze, and a short gap is no freeze.
	_ = seq
	if got := s.Summarize(end + 2*time.Second); got.Freezes != 2 || got.Live {
		t.Fatalf("trailing gap: freezes %d live %v, want 2 and not live", got.Freezes, got.Live)
	}
	if got := s.Summarize(end + 400*time.Millisecond); got.Freezes != 1 || !got.Live {
		t.Fatalf("short trailing gap: freezes %d live %v, want 1 and live", got.Freezes, got.Live)
	}
}

func TestParseHeader(t *testing.T) {
	b := []byte{0xb2, 0xe0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 1, // V2, P, X, CC=2, M, PT 96
		0, 0, 0, 1, 0, 0, 0, 2, // CSRCs
		0xbe, 0xde, 0, 1, 0x10, 0xaa, 0, 0, // one-byte extension, 1 word
		0xde, 0xad, 0, 0, 3} // payload 2 bytes, 3 bytes padding
	h, err := ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Marker || h.PayloadType != 96 || h.Seq != 7 || h.Timestamp != 9 || h.SSRC != 1 || h.PayloadOffset != 28 || h.Padding != 3 {
		t.Fatalf("parsed %+v", h)
	}
	for _, bad := range [][]byte{nil, b[:11], {0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, b[:20], {0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}} {
		if _, err := ParseHeader(bad); err == nil {
			t.Errorf("ParseHeader(%x) accepted", bad)
		}
	}
}

func TestObserveAllocatesNothing(t *testing.T) {
	s := New(Config{Kind: Video, ClockRate: 90000}, 0)
	pkt := packet{seq: 1, ts: 3000, marker: true, start: true, key: true}.bytes(Video)
	var at time.Duration
	allocs := testing.AllocsPerRun(1000, func() {
		binary.BigEndian.PutUint16(pkt[2:], binary.BigEndian.Uint16(pkt[2:])+1)
		at += frame
		_ = s.Observe(pkt, at)
	})
	if allocs != 0 {
		t.Fatalf("Observe allocates %.1f times per packet", allocs)
	}
}

func FuzzObserve(f *testing.F) {
	f.Add(packet{seq: 1, ts: 1, marker: true, start: true, key: true}.bytes(Video), uint8(1))
	f.Add(packet{seq: 65535, ts: 1}.bytes(Audio), uint8(0))
	f.Add([]byte{0xb2, 0xe0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0xbe, 0xde, 0, 1, 0x10, 0xaa, 0, 0, 0x90, 0x80, 0x80, 0, 3}, uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, kind uint8) {
		s := New(Config{Kind: Kind(kind % 2), ClockRate: 90000}, 0)
		for i := 0; i < 3; i++ {
			if err := s.Observe(b, time.Duration(i)*time.Millisecond); err != nil {
				return
			}
		}
		sum := s.Summarize(time.Second)
		if sum.Lost > sum.Expected || sum.Packets != 3 {
			t.Fatalf("inconsistent summary %+v", sum)
		}
		_, _, _ = VP8FrameStart(b)
	})
}

// TestObserveHeaderCountsLikeObserve: a stream fed headers alone after its first keyframe counts
// the same packets, bytes, loss, frames and freezes as one fed the whole packets, and its
// reception report figures follow.
func TestObserveHeaderCountsLikeObserve(t *testing.T) {
	whole := New(Config{Kind: Video, ClockRate: 90000}, 0)
	split := New(Config{Kind: Video, ClockRate: 90000}, 0)
	seq := uint16(65530) // wraps
	var at time.Duration
	for i := 0; i < 60; i++ {
		for j := 0; j < 3; j++ {
			p := packet{seq: seq, ts: uint32(i) * 3000, marker: j == 2, start: j == 0, key: i == 0}
			seq++
			if i == 30 && j == 1 {
				continue // lost
			}
			b := p.bytes(Video)
			if err := whole.Observe(b, at); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				_ = split.Observe(b, at)
				continue
			}
			h, _, _, err := ParseSRTPHeader(append(b, make([]byte, 10)...)) // an SRTP tag after it
			if err != nil {
				t.Fatal(err)
			}
			split.ObserveHeader(h, len(b), at)
		}
		at += frame
	}
	a, b := whole.Summarize(at), split.Summarize(at)
	if a.Packets != b.Packets || a.Bytes != b.Bytes || a.Lost != 1 || b.Lost != 1 || a.Frames != b.Frames || a.Freezes != b.Freezes || !split.Decodable() {
		t.Errorf("whole %+v\nheaders %+v", a, b)
	}
	if r := split.Reception(); r.Expected != 180 || r.Received != 179 || r.ExtHighest != 65530+179 {
		t.Errorf("reception %+v", r)
	}
}

func TestHeaderExtension(t *testing.T) {
	one := []byte{0x10, 0xaa, 0x00, 0x51, 0x01, 0x02, 0x00} // id 1 (1 byte), padding, id 5 (2 bytes)
	if v := HeaderExtension(0xBEDE, one, 5); len(v) != 2 || v[0] != 1 || v[1] != 2 {
		t.Errorf("one-byte: %v", v)
	}
	two := []byte{0x01, 0x01, 0xaa, 0x00, 0x05, 0x02, 0x01, 0x02} // id 1 (1 byte), padding, id 5 (2 bytes)
	if v := HeaderExtension(0x1000, two, 5); len(v) != 2 || v[0] != 1 || v[1] != 2 {
		t.Errorf("two-byte: %v", v)
	}
	if HeaderExtension(0xBEDE, one, 7) != nil || HeaderExtension(0xBEDE, []byte{0x53, 0x01}, 5) != nil {
		t.Error("found what is not there")
	}
}
