package mjrplay

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/sfu"
)

// pkt is one recorded packet of a hand-made recording.
type pkt struct {
	seq     uint16
	ts      uint32
	ssrc    uint32
	pt      uint8
	at      uint32 // ms since the first packet (MJR00002)
	payload []byte
}

// writeMJR writes an MJR00002 recording of type typ ("a", "v") and codec, whose first packet came
// at firstUs (µs since the epoch), and returns its path.
func writeMJR(t testing.TB, dir, name, typ, codec string, firstUs int64, pkts []pkt) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("MJR00002")
	info := fmt.Sprintf(`{"t":%q,"c":%q,"s":%d,"u":%d}`, typ, codec, firstUs-1000, firstUs)
	_ = binary.Write(&b, binary.BigEndian, uint16(len(info)))
	b.WriteString(info)
	for _, p := range pkts {
		raw, err := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: p.pt, SequenceNumber: p.seq,
			Timestamp: p.ts, SSRC: p.ssrc}, Payload: p.payload}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("MEET")
		_ = binary.Write(&b, binary.BigEndian, p.at)
		_ = binary.Write(&b, binary.BigEndian, uint16(len(raw)))
		b.Write(raw)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// audioPkts is n packets of 20 ms Opus-like audio starting at ts0, seq0.
func audioPkts(n int, seq0 uint16, ts0, ssrc uint32) []pkt {
	out := make([]pkt, n)
	for i := range out {
		out[i] = pkt{seq: seq0 + uint16(i), ts: ts0 + uint32(i)*960, ssrc: ssrc, pt: 111, at: uint32(i * 20),
			payload: []byte{0xfc, 0xff, 0xfe}}
	}
	return out
}

// vp8Payload is a VP8 payload descriptor starting a partition, then a few bytes of frame: enough
// for the Receiver's parser (the content is not decoded here).
var vp8Payload = []byte{0x10, 0x00, 0x9d, 0x01, 0x2a, 0x10, 0x00, 0x10, 0x00, 0x00}

// videoPkts is n frames of one packet each, 100 ms apart.
func videoPkts(n int, seq0 uint16, ts0, ssrc uint32) []pkt {
	out := make([]pkt, n)
	for i := range out {
		out[i] = pkt{seq: seq0 + uint16(i), ts: ts0 + uint32(i)*9000, ssrc: ssrc, pt: 96, at: uint32(i * 100),
			payload: vp8Payload}
	}
	return out
}

// got is what a sink received: each packet's header and when it came.
type got struct {
	seq  uint16
	ts   uint32
	ssrc uint32
	at   time.Duration
	size int
}

// recorder is a Sink keeping what it receives.
type recorder struct {
	mu  sync.Mutex
	pks []got
}

func (r *recorder) WriteRTP(p *sfu.Packet) {
	r.mu.Lock()
	r.pks = append(r.pks, got{p.Header.Seq, p.Header.Timestamp, p.Header.SSRC, p.At, len(p.Bytes)})
	r.mu.Unlock()
}

func (r *recorder) Resync() {}

func (r *recorder) packets() []got {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]got(nil), r.pks...)
}

// openWithSinks opens paths and adds a recorder to every track.
func openWithSinks(t testing.TB, paths ...string) (*Source, []*recorder) {
	t.Helper()
	s, err := Open(paths, sfu.ReceiverConfig{ID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var recs []*recorder
	for _, tr := range s.Tracks() {
		r := &recorder{}
		tr.Recv.AddSink(r)
		recs = append(recs, r)
	}
	return s, recs
}

func waitDone(t testing.TB, s *Source, within time.Duration) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(within):
		t.Fatal("the playback did not end")
	}
}
