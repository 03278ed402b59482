package sip

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// garbage is what a hostile or broken peer sends to a handle's SIP port.
var garbage = []string{
	"", "\x00\x01\x02\x03", "hello world\r\n\r\n", strings.Repeat("A", 60000),
	"INVITE sip:a@b SIP/2.0\r\n",                         // truncated: no headers
	"INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP\r\n\r\n", // Via without host
	"SIP/2.0 200 OK\r\nCSeq: x\r\n\r\n",                  // a response to nothing
	"INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKx\r\nFrom: <sip:x@y>;tag=1\r\n" +
		"To: <sip:a@b>\r\nCall-ID: c1\r\nCSeq: 1 INVITE\r\nContent-Length: 999\r\n\r\nv=0", // body shorter than said
	"INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKy\r\nFrom: <sip:x@y>;tag=1\r\n" +
		"To: <sip:a@b>\r\nCall-ID: c2\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: 12\r\n\r\nnot an sdp!!", // no Contact, bad SDP
	"BYE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKz\r\nFrom: <sip:x@y>;tag=1\r\n" +
		"To: <sip:a@b>;tag=2\r\nCall-ID: nosuch\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n",
	"REFER sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKr\r\nFrom: <sip:x@y>;tag=1\r\n" +
		"To: <sip:a@b>\r\nCall-ID: r1\r\nCSeq: 1 REFER\r\nContent-Length: 0\r\n\r\n", // REFER without Refer-To
	"INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKn1\r\nFrom: <sip:x@y>;tag=1\r\n" +
		"To: <sip:a@b>\r\nCSeq: 1 INVITE\r\nContact: <sip:x@127.0.0.1:1>\r\nContent-Length: 0\r\n\r\n", // no Call-ID
	"INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKn2\r\nCall-ID: n2\r\n" +
		"To: <sip:a@b>\r\nCSeq: 1 INVITE\r\nContact: <sip:x@127.0.0.1:1>\r\nContent-Length: 0\r\n\r\n", // no From
	"MESSAGE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKn3\r\nCall-ID: n3\r\n" +
		"CSeq: 1 MESSAGE\r\nContent-Length: 2\r\n\r\nhi", // no From, no To
	"BYE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKn4\r\nFrom: <sip:x@y>;tag=1\r\n" +
		"To: <sip:a@b>;tag=2\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n", // no Call-ID
	"INFO sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKn5\r\nFrom: <sip:x@y>;tag=1\r\n" +
		"To: <sip:a@b>;tag=2\r\nCall-ID: n5\r\nCSeq: 1 INFO\r\nContent-Length: 0\r\n\r\n", // INFO of no call
}

// TestMalformedSIP: garbage and truncated messages on a handle's SIP port over UDP and TCP leave
// the handle serving: an OPTIONS afterwards is answered 200, and requests still work.
func TestMalformedSIP(t *testing.T) {
	_, s, h := attach(t)
	send(s, "g", map[string]any{"request": "register", "type": "guest", "username": "sip:guest@strata.test"})
	if e := h.next(t); e.result() != "registered" {
		t.Fatalf("guest: %+v", e.data)
	}
	addr := "127.0.0.1:" + strconv.Itoa(s.st.port)
	udp, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	for _, g := range garbage {
		_, _ = udp.Write([]byte(g))
	}
	for _, g := range garbage {
		tcp, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = tcp.Write([]byte(g))
		_ = tcp.Close()
	}
	// A REFER without Refer-To could have produced a transfer event; the bad INVITEs an incomingcall.
	select {
	case e := <-h.events:
		t.Fatalf("garbage produced an event: %+v", e.data)
	case <-time.After(300 * time.Millisecond):
	}
	options := "OPTIONS sip:guest@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP " + udp.LocalAddr().String() +
		";branch=z9hG4bKopt1\r\nFrom: <sip:probe@127.0.0.1>;tag=9\r\nTo: <sip:guest@127.0.0.1>\r\n" +
		"Call-ID: opt1\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
	if _, err := udp.Write([]byte(options)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	_ = udp.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		n, err := udp.Read(buf)
		if err != nil {
			t.Fatalf("no answer to OPTIONS after the garbage: %v", err)
		}
		if strings.HasPrefix(string(buf[:n]), "SIP/2.0 200") && strings.Contains(string(buf[:n]), "opt1") {
			break
		}
	}
	send(s, "k", map[string]any{"request": "keyframe"})
	if e := h.next(t); e.data["error_code"] != float64(ErrWrongState) {
		t.Fatalf("after garbage: %+v", e.data)
	}
}
