package peer

import (
	"github.com/pion/rtcp"
)

// RequestKeyframe asks the sender of ssrc on this PeerConnection for a keyframe (PLI). It is the
// sfu.KeyframeRequester of every Receiver a plugin feeds from a browser's tracks; ssrc 0, a layer
// not seen yet, asks nothing.
func (p *Peer) RequestKeyframe(_ int, ssrc uint32) {
	if ssrc == 0 {
		return
	}
	if err := p.PC.WriteRTCP([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: ssrc}}); err != nil {
		p.log.Debug("writing PLI", "err", err)
	}
}

// CapBitrate tells the browser to send at most bitrate bit/s on the streams ssrcs (REMB), as
// Janus's `bitrate` requests do. No ssrcs, nothing sent.
func (p *Peer) CapBitrate(bitrate uint32, ssrcs ...uint32) {
	if len(ssrcs) == 0 {
		return
	}
	remb := &rtcp.ReceiverEstimatedMaximumBitrate{Bitrate: float32(bitrate), SSRCs: ssrcs}
	if err := p.PC.WriteRTCP([]rtcp.Packet{remb}); err != nil {
		p.log.Debug("writing REMB", "err", err)
	}
}
