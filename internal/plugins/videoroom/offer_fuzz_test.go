package videoroom

import (
	"strings"
	"testing"

	"github.com/pion/sdp/v3"
)

// FuzzDescribeOffer feeds whole arbitrary offers to what a publisher's offer goes through before
// Pion sees it: describeOffer never panics, and the offer it prepares for Pion still parses and has
// as many m-lines as the one it came from.
func FuzzDescribeOffer(f *testing.F) {
	f.Add(offerWith("a=rid:h send", "a=rid:l send", "a=simulcast:send h;l"))
	f.Add(offerWith(chromeSIM...))
	f.Add(strings.ReplaceAll(offerWith(chromeSIM...), "a=mid:1", "a=mid:0"))
	f.Add("v=0\r\no=- 0 0 IN IP4 0\r\ns=-\r\nt=0 0\r\nm=video 9 RTP/AVP 96\r\na=ssrc-group:SIM 1 2\r\n")
	f.Fuzz(func(t *testing.T, offer string) {
		lines, err := describeOffer(offer)
		if err != nil {
			return
		}
		var in, out sdp.SessionDescription
		if err := in.Unmarshal([]byte(offer)); err != nil {
			t.Fatalf("describeOffer accepted what sdp refuses: %v", err)
		}
		prepared := offerForPion(offer, lines)
		if err := out.Unmarshal([]byte(prepared)); err != nil {
			t.Fatalf("prepared offer does not parse: %v\n%s", err, prepared)
		}
		if len(in.MediaDescriptions) != len(out.MediaDescriptions) {
			t.Fatalf("%d m-lines became %d", len(in.MediaDescriptions), len(out.MediaDescriptions))
		}
	})
}
