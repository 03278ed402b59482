package sfu

import (
	"encoding/binary"
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

// LocalSource is a track strata produces itself rather than receives: an audio bridge's mix for
// one listener, an announcement. It numbers the frames it is given into RTP packets and delivers
// them through its own Receiver, so that whatever consumes it (a DownTrack towards a
// PeerConnection, a Forwarder, a recorder) is the same sink as for a published track: the
// packets are parsed, cached for retransmissions and measured like any other.
//
// Write is called by one goroutine at a time and allocates nothing.
type LocalSource struct {
	recv *Receiver
	ssrc uint32
	pt   uint8
	seq  uint16
	buf  [rtpHeaderLen + media.SlotSize]byte
}

const rtpHeaderLen = 12

// NewLocalSource returns a source of the codec of cfg whose packets carry ssrc and payload type pt
// (what a DownTrack rewrites anyway, and what a Forwarder keeps unless told otherwise).
func NewLocalSource(cfg ReceiverConfig, ssrc uint32, pt uint8) *LocalSource {
	recv := NewReceiver(cfg, func(int, uint32) {}) // nothing upstream to ask for a keyframe
	recv.SetLayerSSRC(0, ssrc)
	return &LocalSource{recv: recv, ssrc: ssrc, pt: pt & 0x7f}
}

// Receiver is the receiver the source's packets go through; add sinks to it.
func (s *LocalSource) Receiver() *Receiver { return s.recv }

// Write sends one frame's payload with RTP timestamp ts to every sink, at time now. A payload
// longer than a cache slot is dropped (the receiver counts it as malformed).
func (s *LocalSource) Write(payload []byte, ts uint32, marker bool, now time.Duration) {
	if len(payload) > media.SlotSize-rtpHeaderLen {
		s.recv.badRTP.Add(1)
		return
	}
	b := s.buf[:rtpHeaderLen+len(payload)]
	b[0] = 0x80
	b[1] = s.pt
	if marker {
		b[1] |= 0x80
	}
	binary.BigEndian.PutUint16(b[2:], s.seq)
	binary.BigEndian.PutUint32(b[4:], ts)
	binary.BigEndian.PutUint32(b[8:], s.ssrc)
	copy(b[rtpHeaderLen:], payload)
	s.seq++
	s.recv.WriteRTP(0, b, now)
}

// Close stops delivering.
func (s *LocalSource) Close() { s.recv.Close() }
