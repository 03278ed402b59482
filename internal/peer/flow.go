package peer

import (
	"net/netip"

	"github.com/pion/webrtc/v4"
)

// SelectedFlow is the UDP flow of the selected ICE candidate pair: this server's local address
// and the remote peer's, as the packets carry them (what a switch next to the server matches).
// ok is false before a pair is selected, or when it is not UDP. With media.ice.nat_1to1_ips the
// local candidate shows the public address, not the one on the wire.
func (p *Peer) SelectedFlow() (local, remote netip.AddrPort, ok bool) {
	pair, err := p.PC.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
	if err != nil || pair == nil || pair.Local == nil || pair.Remote == nil ||
		pair.Local.Protocol != webrtc.ICEProtocolUDP || pair.Remote.Protocol != webrtc.ICEProtocolUDP {
		return local, remote, false
	}
	la, err1 := netip.ParseAddr(pair.Local.Address)
	ra, err2 := netip.ParseAddr(pair.Remote.Address)
	if err1 != nil || err2 != nil {
		return local, remote, false
	}
	return netip.AddrPortFrom(la.Unmap(), pair.Local.Port), netip.AddrPortFrom(ra.Unmap(), pair.Remote.Port), true
}
