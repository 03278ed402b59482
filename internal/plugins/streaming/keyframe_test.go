package streaming_test

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/pion/rtcp"
)

// TestKeyframeRequestOnJoin: a mountpoint with an RTCP port learns the source's address from its
// sender reports; a viewer that starts makes strata send the source a keyframe request (PLI and
// FIR for the source's SSRC) at once, so the viewer need not wait for the next periodic keyframe.
func TestKeyframeRequestOnJoin(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mp := createRTP(t, admin, map[string]any{"type": "video", "mid": "v", "port": 0, "rtcpport": 0, "pt": 100, "codec": "vp8"})
	src, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rtpAddr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: mp.port(t, "v", "port")}
	rtcpAddr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: mp.port(t, "v", "rtcp_port")}
	const ssrc = 0x5151
	pkt := make([]byte, 16)
	pkt[0], pkt[1] = 0x80, 100|0x80
	binary.BigEndian.PutUint32(pkt[8:], ssrc)
	pkt[12], pkt[13], pkt[14], pkt[15] = 0x10, 0x01, 0, 0 // an interframe: no keyframe yet
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the source: RTP every 33 ms and a sender report every 200 ms
		sr, _ := (&rtcp.SenderReport{SSRC: ssrc}).Marshal()
		for i := uint16(0); ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(33 * time.Millisecond):
			}
			binary.BigEndian.PutUint16(pkt[2:], i)
			_, _ = src.WriteToUDP(pkt, rtpAddr)
			if i%6 == 0 {
				_, _ = src.WriteToUDP(sr, rtcpAddr)
			}
		}
	}()
	time.Sleep(500 * time.Millisecond) // a sender report has arrived
	watch(t, c, mp.id, nil)
	buf := make([]byte, 1500)
	_ = src.SetReadDeadline(time.Now().Add(3 * time.Second))
	n, err := src.Read(buf)
	if err != nil {
		t.Fatalf("no keyframe request reached the source: %v", err)
	}
	pkts, err := rtcp.Unmarshal(buf[:n])
	if err != nil || len(pkts) == 0 {
		t.Fatalf("%v %v", pkts, err)
	}
	pli, ok := pkts[0].(*rtcp.PictureLossIndication)
	if !ok || pli.MediaSSRC != ssrc {
		t.Fatalf("got %v, want a PLI for %x", pkts, ssrc)
	}
}
