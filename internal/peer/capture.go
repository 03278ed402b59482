package peer

import (
	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/pcap"
)

// SetCapture makes the PeerConnection copy its clear RTP and RTCP, both directions, into c (the
// admin API's start_pcap); nil stops it. It returns the capture it replaces. The tap is the first
// interceptor of the chain (Factory.registry): it sees incoming packets right after SRTP
// decryption and outgoing ones, retransmissions and reports included, right before encryption.
func (p *Peer) SetCapture(c *pcap.Capture) *pcap.Capture {
	return p.capture.Swap(c)
}

// captureFactory builds the tap of one Peer.
type captureFactory struct{ p *Peer }

func (f captureFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	return &captureInterceptor{p: f.p}, nil
}

// captureInterceptor hands packets to the Peer's capture, if one is set: one atomic load per packet
// otherwise, and nothing allocated.
type captureInterceptor struct {
	interceptor.NoOp
	p *Peer
}

func (i *captureInterceptor) BindRemoteStream(_ *interceptor.StreamInfo, reader interceptor.RTPReader) interceptor.RTPReader {
	return interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, a, err := reader.Read(b, a)
		if c := i.p.capture.Load(); c != nil && err == nil {
			c.Packet(true, b[:n])
		}
		return n, a, err
	})
}

func (i *captureInterceptor) BindRTCPReader(reader interceptor.RTCPReader) interceptor.RTCPReader {
	return interceptor.RTCPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, a, err := reader.Read(b, a)
		if c := i.p.capture.Load(); c != nil && err == nil {
			c.Packet(true, b[:n])
		}
		return n, a, err
	})
}

// maxCapturedHeader is the RTP header size marshalled on the stack; larger ones (many CSRCs or
// extensions) are marshalled on the heap.
const maxCapturedHeader = 256

func (i *captureInterceptor) BindLocalStream(_ *interceptor.StreamInfo, writer interceptor.RTPWriter) interceptor.RTPWriter {
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		if c := i.p.capture.Load(); c != nil {
			captureRTP(c, h, payload)
		}
		return writer.Write(h, payload, a)
	})
}

func captureRTP(c *pcap.Capture, h *rtp.Header, payload []byte) {
	var buf [maxCapturedHeader]byte
	var head []byte
	if h.MarshalSize() <= len(buf) {
		n, err := h.MarshalTo(buf[:])
		if err != nil {
			return
		}
		head = buf[:n]
	} else {
		var err error
		if head, err = h.Marshal(); err != nil {
			return
		}
	}
	// Pion appends the padding when it marshals the packet: the capture does the same.
	var pad [256]byte
	var padding []byte
	if h.Padding && h.PaddingSize > 0 {
		padding = pad[:h.PaddingSize]
		padding[len(padding)-1] = h.PaddingSize
	}
	c.PacketParts(false, head, payload, padding)
}

func (i *captureInterceptor) BindRTCPWriter(writer interceptor.RTCPWriter) interceptor.RTCPWriter {
	return interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, a interceptor.Attributes) (int, error) {
		if c := i.p.capture.Load(); c != nil {
			if b, err := rtcp.Marshal(pkts); err == nil { // allocates, only while capturing
				c.Packet(false, b)
			}
		}
		return writer.Write(pkts, a)
	})
}
