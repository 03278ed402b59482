package media

import "github.com/pion/sdp/v3"

// OffersDataChannels reports whether a session description has an application m-line that is
// not rejected (port 0): SCTP data channels. An SDP that does not parse has none (Pion refuses it
// later with its own error).
func OffersDataChannels(desc string) bool {
	var parsed sdp.SessionDescription
	if parsed.Unmarshal([]byte(desc)) != nil {
		return false
	}
	for _, md := range parsed.MediaDescriptions {
		if md.MediaName.Media == "application" && md.MediaName.Port.Value != 0 {
			return true
		}
	}
	return false
}
