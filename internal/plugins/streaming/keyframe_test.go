package streaming_test

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/internal/janusclient"
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

// TestBufferKF: a source with a keyframe every 30 s and no RTCP port (nothing can be asked for a
// keyframe). A viewer of a mountpoint with bufferkf gets the newest keyframe and what followed it
// from the cache and decodes as soon as its PeerConnection is up; a viewer of the same stream
// without it decodes nothing until the next keyframe. The waits are for events (the source's
// packets, the viewers' PeerConnections), so a loaded machine only makes the test slower.
func TestBufferKF(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	buffered := createRTP(t, admin, map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp8", "bufferkf": true})
	plain := createRTP(t, admin, map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp8"})
	args := []string{"-re", "-f", "lavfi", "-i", "testsrc=size=160x90:rate=30"}
	for _, port := range []int{buffered.port(t, "v", "port"), plain.port(t, "v", "port")} {
		args = append(args, "-map", "0:v", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "16", "-threads", "1",
			"-g", "900", "-b:v", "100k")
		args = append(args, rtpOut(port, 100)...)
	}
	ffmpeg(t, args...)
	waitReceived(t, admin, buffered.id, 30, 15*time.Second) // past the first keyframe
	withKF, without := watch(t, c, buffered.id, nil), watch(t, c, plain.id, nil)
	for _, v := range []*viewer{withKF, without} {
		v.waitEvent(15*time.Second, func(e map[string]any) bool { return status(e) == "started" })
	}
	frames := 0
	for deadline := time.Now().Add(10 * time.Second); frames < 30 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		frames, _ = withKF.framesSoFar("v")
	}
	t.Logf("bufferkf viewer: %d frames decoded", frames)
	if frames < 30 {
		t.Errorf("bufferkf viewer decoded %d frames, want the replayed keyframe and what followed", frames)
	}
	if n, _ := without.framesSoFar("v"); n != 0 {
		t.Errorf("viewer without bufferkf decoded %d frames before the next keyframe", n)
	}
}

// waitReceived waits until the mountpoint's first stream has received n packets.
func waitReceived(t *testing.T, admin *janusclient.Handle, id uint64, n float64, within time.Duration) {
	t.Helper()
	var got any
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		info, _ := request(t, admin, map[string]any{"request": "info", "id": id}, nil)
		got = info["info"].(map[string]any)["media"].([]any)[0].(map[string]any)["packets_received"]
		if p, _ := got.(float64); p >= n {
			return
		}
	}
	t.Fatalf("mountpoint %d received %v packets, want %v", id, got, n)
}
