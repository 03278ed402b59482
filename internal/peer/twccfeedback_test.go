package peer

import (
	"io"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/transport/v4/packetio"
)

const testTWCCExtID = 5

// twccPacket is an RTP packet of ssrc with sequence number seq and transport-wide number tseq.
func twccPacket(t *testing.T, ssrc uint32, seq, tseq uint16) []byte {
	t.Helper()
	h := rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, SSRC: ssrc}
	if err := h.SetExtension(testTWCCExtID, []byte{byte(tseq >> 8), byte(tseq)}); err != nil {
		t.Fatal(err)
	}
	p := &rtp.Packet{Header: h, Payload: make([]byte, 100)}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// feedbackHarness is a feedback interceptor with a hand-driven clock, reading one stream from
// the buffer the Peer's BufferFactory would give Pion's SRTP session.
type feedbackHarness struct {
	t      *testing.T
	clock  int64
	arr    *arrivals
	sender *feedbackSender
	buf    io.ReadWriteCloser
	read   interceptor.RTPReader
}

func newFeedbackHarness(t *testing.T, ssrc uint32) *feedbackHarness {
	h := &feedbackHarness{t: t, arr: newArrivals()}
	h.arr.now = func() int64 { return h.clock }
	h.buf = h.arr.bufferFactory(packetio.RTPBufferPacket, ssrc)
	it, err := newFeedbackFactory(h.arr, 100*time.Millisecond, newLoggerFactory(testLogger())).NewInterceptor("")
	if err != nil {
		t.Fatal(err)
	}
	h.sender = it.(*feedbackSender)
	t.Cleanup(func() { _ = h.sender.Close() })
	info := &interceptor.StreamInfo{SSRC: ssrc, RTPHeaderExtensions: []interceptor.RTPHeaderExtension{{URI: sdp.TransportCCURI, ID: testTWCCExtID}}}
	h.read = h.sender.BindRemoteStream(info, interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, err := h.buf.Read(b)
		return n, a, err
	}))
	return h
}

func (h *feedbackHarness) readOne() {
	h.t.Helper()
	if _, _, err := h.read.Read(make([]byte, 1500), nil); err != nil {
		h.t.Fatal(err)
	}
}

// deltas returns the receive deltas (µs) of the feedback built now.
func (h *feedbackHarness) deltas() []int64 {
	h.t.Helper()
	var out []int64
	for _, p := range h.sender.build() {
		fb, ok := p.(*rtcp.TransportLayerCC)
		if !ok {
			h.t.Fatalf("feedback packet %T", p)
		}
		for _, d := range fb.RecvDeltas {
			out = append(out, d.Delta)
		}
	}
	return out
}

// TestFeedbackReportsArrivalNotReadTime: packets that arrived 1 ms apart but were read together
// 50 ms later (the reader was busy with the packets before them) are reported 1 ms apart. Pion's
// TWCC interceptor would report them as arriving together.
func TestFeedbackReportsArrivalNotReadTime(t *testing.T) {
	h := newFeedbackHarness(t, 1111)
	for i := range 5 {
		h.clock = int64(i) * 1000
		if _, err := h.buf.Write(twccPacket(t, 1111, uint16(100+i), uint16(7+i))); err != nil {
			t.Fatal(err)
		}
	}
	h.clock = 50_000
	for range 5 {
		h.readOne()
	}
	got := h.deltas()
	if len(got) != 5 {
		t.Fatalf("%d packets reported, want 5: %v", len(got), got)
	}
	for i, d := range got[1:] {
		if d != 1000 {
			t.Errorf("delta of packet %d: %d µs, want the 1000 µs between the arrivals (all: %v)", i+1, d, got)
		}
	}
}

// TestFeedbackWithoutStampUsesReadTime: a stream read from a buffer nobody stamped is reported
// at the time of its reads.
func TestFeedbackWithoutStampUsesReadTime(t *testing.T) {
	h := newFeedbackHarness(t, 2222)
	plain := packetio.NewBuffer()
	h.buf = plain
	for i := range 3 {
		if _, err := plain.Write(twccPacket(t, 2222, uint16(i), uint16(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		h.clock = int64(i) * 4000
		h.readOne()
	}
	got := h.deltas()
	if len(got) != 3 || got[1] != 4000 || got[2] != 4000 {
		t.Errorf("deltas %v, want 4000 µs apart (the reads)", got)
	}
}

func TestStampRingKeepsTheLastPacketOfASlot(t *testing.T) {
	var r stampRing
	r.put(5, 0)
	if at, ok := r.get(5); !ok || at != 0 {
		t.Errorf("get(5) = %d, %v; want the stamp at 0", at, ok)
	}
	r.put(5+stampSlots, 777)
	if _, ok := r.get(5); ok {
		t.Error("seq 5 still found after seq 5+stampSlots took its slot")
	}
	if at, ok := r.get(5 + stampSlots); !ok || at != 777 {
		t.Errorf("get(5+stampSlots) = %d, %v", at, ok)
	}
	if _, ok := r.get(6); ok {
		t.Error("an empty slot gave a stamp")
	}
	var none *stampRing
	if _, ok := none.get(5); ok {
		t.Error("a nil ring gave a stamp")
	}
}

// TestStampedBufferClosesAndForgets: closing a stream's buffer drops its stamps, not those of a
// newer stream on the same SSRC.
func TestStampedBufferClosesAndForgets(t *testing.T) {
	a := newArrivals()
	old := a.bufferFactory(packetio.RTPBufferPacket, 9)
	newer := a.bufferFactory(packetio.RTPBufferPacket, 9)
	oldRing := old.(*stampedBuffer).ring
	if _, err := old.Write(twccPacket(t, 9, 40, 1)); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if a.ring(9) == nil {
		t.Fatal("closing the old buffer dropped the newer one's stamps")
	}
	if _, ok := oldRing.get(40); ok {
		t.Error("a closed buffer's stamps can still be found")
	}
	if err := newer.Close(); err != nil {
		t.Fatal(err)
	}
	if a.ring(9) != nil {
		t.Error("stamps kept after the buffer closed")
	}
	if _, ok := a.bufferFactory(packetio.RTCPBufferPacket, 9).(*stampedBuffer); ok {
		t.Error("an RTCP buffer stamps packets")
	}
}
