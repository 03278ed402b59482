package rtpin

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
)

// RTCP lengths of the keyframe requests sent back to a source: a PLI (RFC 4585) followed by a FIR
// (RFC 5104), in one compound packet, since encoders answer one or the other (ffmpeg's and
// GStreamer's payloaders differ).
const (
	pliLen = 12
	firLen = 20
	// senderSSRC is the SSRC strata's requests carry as their sender's.
	senderSSRC = 1
)

// isRTCP tells RTCP from RTP on a multiplexed port (RFC 5761 §4: packet types 192-223).
func isRTCP(pkt []byte) bool {
	return len(pkt) >= 8 && pkt[0]>>6 == 2 && pkt[1] >= 192 && pkt[1] <= 223
}

// readRTCP reads the source's RTCP port: the reports themselves are not needed (viewers' receiver
// reports come from their own PeerConnections), only the address they come from, where keyframe
// requests go.
func (s *Source) readRTCP(st *stream) {
	defer s.wg.Done()
	buf := make([]byte, bufSize)
	for {
		n, from, err := st.rtcp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if s.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if isRTCP(buf[:n]) {
			st.rtcpArrived(from)
		}
	}
}

// rtcpArrived records where the source's RTCP comes from.
func (st *stream) rtcpArrived(from netip.AddrPort) {
	st.rtcpIn.Add(1)
	if cur := st.rtcpFrom.Load(); cur == nil || *cur != from {
		st.rtcpFrom.Store(&from)
	}
}

// requestKeyframe is the receiver's KeyframeRequester: a PLI and a FIR for the layer's SSRC, to
// the address the source's RTCP came from. Without an RTCP port, or before any RTCP arrived, the
// request has nowhere to go and is counted as unsent (Janus does the same: it sends keyframe
// requests only to a source whose RTCP it has received).
func (st *stream) requestKeyframe(layer int, ssrc uint32) {
	dst := st.rtcpFrom.Load()
	conn := st.rtcp
	if conn == nil && dst != nil {
		conn = st.conns[0] // RTCP muxed on the RTP port: answer from it
	}
	if conn == nil || dst == nil || ssrc == 0 {
		st.kfUnsent.Add(1)
		return
	}
	st.firMu.Lock()
	st.firSeq++
	b := buildKeyframeRequest(st.pli[:], ssrc, st.firSeq)
	_, err := conn.WriteToUDPAddrPort(b, *dst)
	st.firMu.Unlock()
	if err != nil {
		st.kfUnsent.Add(1)
		return
	}
	st.kfSent.Add(1)
}

// buildKeyframeRequest writes a PLI and a FIR for ssrc into b (pliLen+firLen bytes).
func buildKeyframeRequest(b []byte, ssrc uint32, seq uint8) []byte {
	b = b[:pliLen+firLen]
	b[0], b[1] = 0x81, 206 // V=2, FMT=1 (PLI), PSFB
	binary.BigEndian.PutUint16(b[2:], pliLen/4-1)
	binary.BigEndian.PutUint32(b[4:], senderSSRC)
	binary.BigEndian.PutUint32(b[8:], ssrc)
	f := b[pliLen:]
	f[0], f[1] = 0x84, 206 // FMT=4 (FIR)
	binary.BigEndian.PutUint16(f[2:], firLen/4-1)
	binary.BigEndian.PutUint32(f[4:], senderSSRC)
	binary.BigEndian.PutUint32(f[8:], 0) // media source: unused in a FIR
	binary.BigEndian.PutUint32(f[12:], ssrc)
	f[16], f[17], f[18], f[19] = seq, 0, 0, 0
	return b
}
