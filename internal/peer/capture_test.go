package peer

import (
	"path/filepath"
	"testing"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/pcap"
)

// TestCaptureTap: the tap passes packets through untouched, hands them to the capture while one is
// set, and allocates nothing per RTP packet either way.
func TestCaptureTap(t *testing.T) {
	p := &Peer{}
	tap := &captureInterceptor{p: p}
	in := make([]byte, 200)
	in[0] = 0x80
	reader := tap.BindRemoteStream(&interceptor.StreamInfo{SSRC: 1}, interceptor.RTPReaderFunc(
		func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
			return copy(b, in), a, nil
		}))
	written := 0
	writer := tap.BindLocalStream(&interceptor.StreamInfo{SSRC: 2}, interceptor.RTPWriterFunc(
		func(h *rtp.Header, payload []byte, _ interceptor.Attributes) (int, error) {
			written++
			return len(payload), nil
		}))
	rtcpWriter := tap.BindRTCPWriter(interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, _ interceptor.Attributes) (int, error) { return 0, nil }))
	buf := make([]byte, 1500)
	h := &rtp.Header{Version: 2, PayloadType: 96, SSRC: 2, SequenceNumber: 7, Padding: true, PaddingSize: 4}
	payload := make([]byte, 100)
	step := func() {
		if n, _, err := reader.Read(buf, nil); err != nil || n != len(in) {
			t.Fatalf("read %d %v", n, err)
		}
		if _, err := writer.Write(h, payload, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Errorf("without a capture: %.1f allocations per packet pair", n)
	}
	path := filepath.Join(t.TempDir(), "tap.pcap")
	c, err := pcap.Create(path, 0, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if prev := p.SetCapture(c); prev != nil {
		t.Fatal("a capture was set already")
	}
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Errorf("with a capture: %.1f allocations per packet pair", n)
	}
	if _, err := rtcpWriter.Write([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	if p.SetCapture(nil) != c {
		t.Fatal("SetCapture(nil) did not return the capture")
	}
	step() // not captured
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// AllocsPerRun runs step once more than asked, to warm up: 101 reads and 101 writes, one RTCP.
	if want := uint64(2*101 + 1); c.Written() != want || c.Dropped() != 0 {
		t.Errorf("captured %d packets (%d dropped), want %d", c.Written(), c.Dropped(), want)
	}
	if written != 2*101+1 {
		t.Errorf("%d packets reached the writer, want %d", written, 2*101+1)
	}
}
