package rtpbridge

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/rtpbridge/bridgetest"
)

// TestSippEchoesThroughTheBridge: the plain peer is real software, sipp's RTP echo (package
// sip-tester), which sends back whatever reaches its media port: the browser hears its own tone
// after the round trip browser → strata → sipp → strata → browser.
func TestSippEchoesThroughTheBridge(t *testing.T) {
	sipp, err := exec.LookPath("sipp")
	if err != nil {
		t.Fatal("sipp (package sip-tester) is needed:", err)
	}
	media, sip := freeUDPPort(t), freeUDPPort(t)
	cmd := exec.Command(sipp, "-sn", "uas", "-rtp_echo", "-mp", strconv.Itoa(media), "-i", "127.0.0.1",
		"-p", strconv.Itoa(sip), "-nostdin", "-timeout", "60s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitUDPBound(t, media)

	s := newBridge(t, testFactory(t), loopback, Options{})
	browser := bridgetest.NewBrowser(t, 440, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.FromWebRTC(ctx, browser.Offer()); err != nil {
		t.Fatal(err)
	}
	answer := fmt.Sprintf("v=0\r\no=user1 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"+
		"m=audio %d RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n", media)
	jsep, err := s.FromPlain(ctx, answer, webrtc.SDPTypeAnswer)
	if err != nil {
		t.Fatal(err)
	}
	browser.SetAnswer(jsep)
	browser.Send(ctx)
	bridgetest.WaitFor(t, 8*time.Second, "the browser hearing its tone back from sipp", func() bool {
		return browser.ToneLevel(440, 1600) > 0.1
	})
	if st := s.Stats(); st.Peer != fmt.Sprintf("127.0.0.1:%d", media) || st.Audio.FromPlain.Packets == 0 {
		t.Errorf("stats %+v", st)
	}
}

// freeUDPPort is an even port free on loopback a moment ago, with the next one free as well
// (sipp binds media port and port+2).
func freeUDPPort(t *testing.T) int {
	t.Helper()
	for range 50 {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		p := c.LocalAddr().(*net.UDPAddr).Port
		_ = c.Close()
		if p%2 == 0 && p < 65000 {
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

// waitUDPBound waits until a process has bound port (binding it fails).
func waitUDPBound(t *testing.T, port int) {
	t.Helper()
	bridgetest.WaitFor(t, 5*time.Second, "sipp's media port", func() bool {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err == nil {
			_ = c.Close()
		}
		return err != nil
	})
}
