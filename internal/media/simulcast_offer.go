package media

import (
	"errors"
	"strings"

	"github.com/pion/sdp/v3"
)

// ErrNoSuchMid is OfferRecvSimulcast's error for a mid the offer does not have.
var ErrNoSuchMid = errors.New("media: no m-line with that mid")

// OfferRecvSimulcast adds to the m-lines of an offer with the given mids that the offerer receives
// simulcast: "a=rid:<rid> recv" for each rid and "a=simulcast:recv r1;r2;...". Pion cannot offer
// that itself (its offers have rids only for sending), so a server that wants a browser to send it
// simulcast in an answer rewrites the offer it sends; its own local description stays Pion's, and
// Pion takes the answer's rids from the remote description. Per the WebRTC spec a browser scales
// the encodings it creates from such an offer 2^(n-1-i) down, so list rids lowest first.
func OfferRecvSimulcast(offer string, mids, rids []string) (string, error) {
	var parsed sdp.SessionDescription
	if err := parsed.Unmarshal([]byte(offer)); err != nil {
		return "", err
	}
	want := map[string]bool{}
	for _, mid := range mids {
		want[mid] = true
	}
	for _, md := range parsed.MediaDescriptions {
		mid, _ := md.Attribute(sdp.AttrKeyMID)
		if !want[mid] {
			continue
		}
		delete(want, mid)
		for _, rid := range rids {
			md.WithValueAttribute("rid", rid+" recv")
		}
		md.WithValueAttribute("simulcast", "recv "+strings.Join(rids, ";"))
	}
	if len(want) > 0 {
		return "", ErrNoSuchMid
	}
	out, err := parsed.Marshal()
	return string(out), err
}
