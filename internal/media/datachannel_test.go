package media

import (
	"strings"
	"testing"
)

const dataOffer = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n" +
	"m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:2\r\na=sctp-port:5000\r\n"

func TestOffersDataChannels(t *testing.T) {
	for _, c := range []struct {
		sdp  string
		want bool
	}{
		{fuzzOffer, false},
		{fuzzOffer + strings.TrimPrefix(dataOffer, "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"), true},
		{dataOffer, true},
		{strings.Replace(dataOffer, "application 9", "application 0", 1), false},
		{"not sdp", false},
	} {
		if got := OffersDataChannels(c.sdp); got != c.want {
			t.Errorf("OffersDataChannels(%q) = %v, want %v", c.sdp, got, c.want)
		}
	}
}

// FuzzOffersDataChannels: any input is answered without a panic.
func FuzzOffersDataChannels(f *testing.F) {
	f.Add(dataOffer)
	f.Add(fuzzOffer)
	f.Add("m=application 0 x\r\n")
	f.Fuzz(func(_ *testing.T, s string) { _ = OffersDataChannels(s) })
}
