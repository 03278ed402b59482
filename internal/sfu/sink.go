package sfu

import (
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
)

// Sink is whatever takes a Receiver's packets: a DownTrack towards a subscriber's PeerConnection,
// a Forwarder relaying RTP to a host and port, and, in the plugins that need them, recorders and
// mixer inputs. It is the whole contract between a published track and what consumes it; a plugin
// that wants the media of a track adds a Sink to its Receiver.
type Sink interface {
	// WriteRTP takes one packet. It runs on the receiver's goroutine of the packet's layer, once
	// per packet and sink, so it must not block; p and the bytes it points to are valid only
	// during the call.
	WriteRTP(p *Packet)
	// Resync says the stream did not go on where it stopped (it was muted and is resumed): the
	// next packet does not follow the last one, and a sink that numbers its output re-anchors.
	Resync()
}

// Packet is one packet of a Receiver, parsed once for all its sinks.
type Packet struct {
	// Source is the receiver the packet came from.
	Source *Receiver
	// Layer is the layer it arrived on: the simulcast stream, 0 for a single stream.
	Layer int
	// Bytes is the whole packet as the publisher sent it. Sinks only read it.
	Bytes []byte
	// Header locates the header fields, extensions and payload in Bytes.
	Header media.Header
	// Flags is what the codec says about the payload (keyframe, layers, switch points).
	Flags media.Flags
	// At is when it arrived (Now's clock).
	At time.Duration

	// out is where a sink of this package builds what it sends. It belongs to the goroutine that
	// delivers the packet, so that no sink holds a lock while Pion or a socket writes.
	out *sendBuffer
}

// Payload is the packet's payload (without padding).
func (p *Packet) Payload() []byte { return p.Bytes[p.Header.PayloadStart:p.Header.PayloadEnd] }

// sendBuffer is what one write through Pion needs: a header with room for the extensions strata
// forwards (and the transport-wide sequence number the interceptor adds), and a payload copy for
// the packets whose payload is rewritten (picture ids, an RTX payload). Whoever writes owns one:
// each receiver layer, and each down-track for its retransmissions and padding.
type sendBuffer struct {
	hdr rtp.Header
	ext [8]rtp.Extension
	buf [media.SlotSize + 2]byte
}

// header resets hdr to a fresh header over the extension array.
func (b *sendBuffer) header(marker bool, pt uint8, seq uint16, ts, ssrc uint32) *rtp.Header {
	b.hdr = rtp.Header{
		Version: 2, Marker: marker, PayloadType: pt, SequenceNumber: seq, Timestamp: ts, SSRC: ssrc,
		Extensions: b.ext[:0],
	}
	return &b.hdr
}
