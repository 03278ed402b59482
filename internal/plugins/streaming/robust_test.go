package streaming_test

import (
	"testing"
	"time"
)

// TestMalformedRTP: garbage sent to a mountpoint's port while ffmpeg feeds it is counted
// (info's malformed_packets) and dropped; the viewer keeps receiving and decoding.
func TestMalformedRTP(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mp := createRTP(t, admin, map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp8"})
	port := mp.port(t, "v", "port")
	args := append(testsrc("160x90")[:5], videoArgs("vp8", "100k")...)
	ffmpeg(t, append(args, rtpOut(port, 100)...)...)
	v := watch(t, c, mp.id, nil)
	v.waitPackets("v", 10, 10*time.Second)
	junk := [][]byte{{1, 2, 3}, make([]byte, 11), {0x40, 100, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, {0x80, 100, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff}}
	for range 25 {
		sendUDP(t, port, junk...)
	}
	v.waitPackets("v", v.count("v")+20, 10*time.Second) // the stream goes on after the garbage
	v.waitFrames("v", 30, 15*time.Second)
	info, _ := request(t, admin, map[string]any{"request": "info", "id": mp.id}, nil)
	m := info["info"].(map[string]any)["media"].([]any)[0].(map[string]any)
	if bad := m["malformed_packets"].(float64); bad < 75 {
		t.Errorf("malformed_packets %v, want at least 75 (three of the four kinds of garbage are not RTP)", bad)
	}
	frames, _ := v.decodedFrames("v")
	if frames < 30 {
		t.Errorf("%d frames decoded", frames)
	}
}

// TestDataStream: each datagram sent to a data stream's port reaches the viewer's data channel
// as a message; pause stops the relay, start resumes it.
func TestDataStream(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mp := createRTP(t, admin, map[string]any{"type": "data", "mid": "d", "port": 0})
	v := watch(t, c, mp.id, nil)
	port := mp.port(t, "d", "port")
	got := func() int {
		v.mu.Lock()
		defer v.mu.Unlock()
		return len(v.msgs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for got() == 0 && time.Now().Before(deadline) {
		sendUDP(t, port, []byte("hello"))
		time.Sleep(50 * time.Millisecond)
	}
	if got() == 0 {
		t.Fatal("no data message")
	}
	v.mu.Lock()
	first := v.msgs[0]
	v.mu.Unlock()
	if first != "hello" {
		t.Errorf("message %q", first)
	}
	request(t, v.h, map[string]any{"request": "pause"}, nil)
	n := got()
	sendUDP(t, port, []byte("paused"))
	time.Sleep(300 * time.Millisecond)
	if got() != n {
		t.Errorf("a message reached a paused viewer")
	}
	request(t, v.h, map[string]any{"request": "start"}, nil)
	sendUDP(t, port, []byte("again"))
	deadline = time.Now().Add(5 * time.Second)
	for got() == n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	v.mu.Lock()
	last := v.msgs[len(v.msgs)-1]
	v.mu.Unlock()
	if last != "again" {
		t.Errorf("after start, last message %q", last)
	}
}

// TestSendAndDisable: configure send=false stops a stream for one viewer, disable stops the
// mountpoint for all, and both resume.
func TestSendAndDisable(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mp := createRTP(t, admin, map[string]any{"type": "audio", "mid": "a", "port": 0, "pt": 111, "codec": "opus"})
	args := append([]string{"-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"}, "-c:a", "libopus", "-b:a", "32k")
	ffmpeg(t, append(args, rtpOut(mp.port(t, "a", "port"), 111)...)...)
	v := watch(t, c, mp.id, nil)
	v.waitPackets("a", 10, 10*time.Second)
	flowing := func(want bool) {
		t.Helper()
		time.Sleep(300 * time.Millisecond) // what was in flight
		n := v.count("a")
		time.Sleep(500 * time.Millisecond)
		if got := v.count("a") > n; got != want {
			t.Errorf("audio flowing %v, want %v", got, want)
		}
	}
	data, _ := request(t, v.h, map[string]any{"request": "configure", "mid": "a", "send": false}, nil)
	if data["result"].(map[string]any)["event"] != "configured" {
		t.Errorf("configure: %v", data)
	}
	flowing(false)
	request(t, v.h, map[string]any{"request": "configure", "send": true}, nil)
	flowing(true)
	request(t, admin, map[string]any{"request": "disable", "id": mp.id}, nil)
	flowing(false)
	request(t, admin, map[string]any{"request": "enable", "id": mp.id}, nil)
	flowing(true)
}
