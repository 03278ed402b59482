package media

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pion/sdp/v3"
)

// recvOffer is an offer with an audio and a video m-line, as strata makes one towards a callee.
const recvOffer = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0 1\r\n" +
	"m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=rtpmap:111 opus/48000/2\r\na=sendrecv\r\n" +
	"m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\na=rtpmap:96 VP8/90000\r\na=sendrecv\r\n"

func TestOfferRecvSimulcast(t *testing.T) {
	out, err := OfferRecvSimulcast(recvOffer, []string{"1"}, []string{"l", "m", "h"})
	if err != nil {
		t.Fatal(err)
	}
	var d sdp.SessionDescription
	if err := d.Unmarshal([]byte(out)); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if a := d.MediaDescriptions[0]; len(SendRIDs(a)) != 0 || strings.Contains(out[:strings.Index(out, "m=video")], "a=rid") {
		t.Fatalf("audio m-line changed:\n%s", out)
	}
	v := d.MediaDescriptions[1]
	var recv []string
	for _, a := range v.Attributes {
		if f := strings.Fields(a.Value); a.Key == "rid" && len(f) == 2 && f[1] == "recv" {
			recv = append(recv, f[0])
		}
	}
	if sim, _ := v.Attribute("simulcast"); !slices.Equal(recv, []string{"l", "m", "h"}) || sim != "recv l;m;h" {
		t.Fatalf("video m-line rids %v, simulcast %q:\n%s", recv, sim, out)
	}
	if _, err := OfferRecvSimulcast(recvOffer, []string{"7"}, []string{"l"}); !errors.Is(err, ErrNoSuchMid) {
		t.Fatalf("unknown mid: %v", err)
	}
	if _, err := OfferRecvSimulcast("not sdp", []string{"1"}, []string{"l"}); err == nil {
		t.Fatal("no error for an SDP that does not parse")
	}
}

// FuzzOfferRecvSimulcast: whatever the input, no panic, and a rewritten offer parses again.
func FuzzOfferRecvSimulcast(f *testing.F) {
	f.Add(recvOffer, "1")
	f.Add(fuzzOffer, "0")
	f.Add("v=0\r\nm=video 0 x 1\r\na=mid:\r\n", "")
	f.Fuzz(func(t *testing.T, offer, mid string) {
		out, err := OfferRecvSimulcast(offer, []string{mid}, []string{"l", "h"})
		if err != nil {
			return
		}
		var d sdp.SessionDescription
		if err := d.Unmarshal([]byte(out)); err != nil {
			t.Fatalf("rewritten offer does not parse: %v", err)
		}
	})
}
