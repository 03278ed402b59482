package sipecho

import (
	"bytes"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEchoAnswersOpusAndEchoes makes one call by hand: the INVITE offers PCMU and Opus at 109,
// the answer must be Opus at 109 on sipp's echo port, an RTP packet sent there comes back
// unchanged, and BYE ends the call.
func TestEchoAnswersOpusAndEchoes(t *testing.T) {
	e, err := Start("127.0.0.1", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	sipAddr, err := net.ResolveUDPAddr("udp4", strings.TrimPrefix(e.URI, "sip:echo@"))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sig.Close()
	media, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer media.Close()
	me := sig.LocalAddr().(*net.UDPAddr)
	sdp := fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio %d RTP/AVP 0 109\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:109 opus/48000/2\r\n",
		media.LocalAddr().(*net.UDPAddr).Port)
	request := func(method string, cseq int, toTag, body string) string {
		ct := ""
		if body != "" {
			ct = "Content-Type: application/sdp\r\n"
		}
		return fmt.Sprintf("%s %s SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK-%s-%d\r\nFrom: <sip:t@127.0.0.1>;tag=1\r\nTo: <%s>%s\r\n"+
			"Call-ID: sipecho-test\r\nCSeq: %d %s\r\nContact: <sip:t@%s>\r\nMax-Forwards: 70\r\n%sContent-Length: %d\r\n\r\n%s",
			method, e.URI, me, method, cseq, e.URI, toTag, cseq, method, me, ct, len(body), body)
	}
	send := func(msg string) {
		if _, err := sig.WriteToUDP([]byte(msg), sipAddr); err != nil {
			t.Fatal(err)
		}
	}
	recv := func(want string) string {
		buf := make([]byte, 4096)
		for {
			_ = sig.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, _, err := sig.ReadFromUDP(buf)
			if err != nil {
				t.Fatalf("waiting for %q: %v", want, err)
			}
			if msg := string(buf[:n]); strings.HasPrefix(msg, want) {
				return msg
			}
		}
	}
	send(request("INVITE", 1, "", sdp))
	ok := recv("SIP/2.0 200")
	m := regexp.MustCompile(`m=audio (\d+) RTP/AVP 109\r?\n`).FindStringSubmatch(ok)
	if m == nil || !strings.Contains(ok, "a=rtpmap:109 opus/48000/2") {
		t.Fatalf("the answer is not Opus at 109:\n%s", ok)
	}
	tag := regexp.MustCompile(`(?m)^To: .*(;tag=\S+)\r?$`).FindStringSubmatch(ok)
	if tag == nil {
		t.Fatalf("no To tag in\n%s", ok)
	}
	send(request("ACK", 1, tag[1], ""))

	port, _ := strconv.Atoi(m[1])
	rtp := []byte{0x80, 109, 0, 1, 0, 0, 0, 160, 0, 0, 0, 7, 0xfc, 0xff, 0xfe}
	if _, err := media.WriteToUDP(rtp, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	_ = media.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := media.ReadFromUDP(buf)
	if err != nil || !bytes.Equal(buf[:n], rtp) {
		t.Fatalf("echo: %x, %v; sent %x", buf[:n], err, rtp)
	}
	send(request("BYE", 2, tag[1], ""))
	recv("SIP/2.0 200")
}
