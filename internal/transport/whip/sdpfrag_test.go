package whip

import (
	"strings"
	"testing"
)

func TestParseFrag(t *testing.T) {
	f, err := parseFrag("a=ice-options:trickle ice2\r\na=group:BUNDLE 0 1\r\nm=audio 9 RTP/AVP 0\r\na=mid:0\r\n" +
		"a=ice-ufrag:EsAw\r\na=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r\na=candidate:1387637174 1 udp 2122260223 192.0.2.1 61764 typ host generation 0\r\n" +
		"a=end-of-candidates\r\nm=video 9 RTP/AVP 0\r\na=mid:1\r\na=candidate:2 1 tcp 1 192.0.2.1 0 typ host tcptype active\r\n")
	if err != nil {
		t.Fatal(err)
	}
	if f.Ufrag != "EsAw" || f.Pwd != "P2uYro0UCOQ4zxjKXaWCBui1" || !f.End || len(f.Cands) != 2 ||
		f.Cands[0].Mid != "0" || f.Cands[1].Mid != "1" || f.Cands[1].MLineIndex != 1 || !strings.HasPrefix(f.Cands[0].Candidate, "candidate:1387637174 ") {
		t.Errorf("parsed %+v", f)
	}
	for _, bad := range []string{
		"x", "hello=world", "z=1", "a=ice-ufrag:a\r\na=ice-ufrag:b\r\na=ice-pwd:p", "a=ice-pwd:p",
		"m=audio 9 RTP/AVP 0\r\na=candidate:1 1 udp 1 192.0.2.1 70000 typ host", "a=candidate:1 1 udp 1 192.0.2.1 9 typ host",
		"m=audio 9 RTP/AVP 0\r\na=mid:", strings.Repeat("a=x\r\n", maxFragLines+1),
	} {
		if _, err := parseFrag(bad); err == nil {
			t.Errorf("parseFrag(%q) accepted", bad)
		}
	}
}

func TestICERestartOfferAndAnswerFrag(t *testing.T) {
	offer := "v=0\r\nm=audio 9 RTP/AVP 0\r\na=mid:0\r\na=ice-ufrag:old\r\na=ice-pwd:oldpwd\r\na=candidate:1 1 udp 1 192.0.2.1 9 typ host\r\na=end-of-candidates\r\n"
	got := withCredentials(offer, "new", "newpwd")
	if u, p := iceCredentials(got); u != "new" || p != "newpwd" || strings.Contains(got, "candidate") {
		t.Errorf("withCredentials: %q", got)
	}
	frag := answerFrag("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\na=group:BUNDLE 0\r\nm=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=mid:0\r\na=ice-ufrag:s\r\na=ice-pwd:spwd\r\na=candidate:1 1 udp 1 192.0.2.1 9 typ host\r\n")
	if f, err := parseFrag(frag); err != nil || f.Ufrag != "s" || len(f.Cands) != 1 || strings.Contains(frag, "rtpmap") {
		t.Errorf("answerFrag: %q %v", frag, err)
	}
}

// FuzzParseFrag: any body is parsed or refused without panicking, and what is accepted is what
// the trickle request needs.
func FuzzParseFrag(f *testing.F) {
	f.Add("a=ice-ufrag:EsAw\r\na=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r\nm=audio 9 RTP/AVP 0\r\na=mid:0\r\na=candidate:1 1 udp 2122260223 192.0.2.1 61764 typ host\r\na=end-of-candidates\r\n")
	f.Add("m=video 9 RTP/AVP 0\r\na=candidate:2 1 tcp 1 192.0.2.1 0 typ host tcptype active\n")
	f.Add("a=end-of-candidates")
	f.Add("a=ice-ufrag:\r\n")
	f.Fuzz(func(t *testing.T, body string) {
		fr, err := parseFrag(body)
		if err != nil {
			return
		}
		if (fr.Ufrag == "") != (fr.Pwd == "") {
			t.Fatalf("half the credentials: %+v", fr)
		}
		for _, c := range fr.Cands {
			if !strings.HasPrefix(c.Candidate, "candidate:") || c.MLineIndex < 0 || len(strings.Fields(c.Candidate)) < 8 {
				t.Fatalf("bad candidate accepted: %+v", c)
			}
		}
		// The restart helpers take whatever a client's offer holds.
		_ = answerFrag(body)
		_ = withCredentials(body, "u", "p")
	})
}
