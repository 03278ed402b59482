package peer

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
)

// streamCounters are the per-SSRC counters strata keeps itself, for `media` and `slowlink` events
// and bitrates. They are updated with atomics only: nothing is locked or allocated per packet.
type streamCounters struct {
	packets atomic.Uint64
	bytes   atomic.Uint64
	// nacked counts sequence numbers asked for again: by strata for a stream it receives, by the
	// remote peer for a stream strata sends.
	nacked atomic.Uint64
}

// counterSet holds the counters of one PeerConnection, by SSRC and direction.
type counterSet struct {
	mu  sync.Mutex
	in  map[uint32]*streamCounters
	out map[uint32]*streamCounters
	// generation grows whenever a stream is added, so the monitor knows to remap SSRCs to m-lines.
	generation atomic.Uint64
}

func newCounterSet() *counterSet {
	return &counterSet{in: map[uint32]*streamCounters{}, out: map[uint32]*streamCounters{}}
}

func (s *counterSet) stream(incoming bool, ssrc uint32) *streamCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.out
	if incoming {
		m = s.in
	}
	c, ok := m[ssrc]
	if !ok {
		c = &streamCounters{}
		m[ssrc] = c
		s.generation.Add(1)
	}
	return c
}

// lookup returns the counters of a stream, or nil if none was bound.
func (s *counterSet) lookup(incoming bool, ssrc uint32) *streamCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	if incoming {
		return s.in[ssrc]
	}
	return s.out[ssrc]
}

// countingInterceptor feeds a counterSet from the RTP and RTCP passing through a PeerConnection.
type countingInterceptor struct {
	interceptor.NoOp
	set *counterSet
}

type countingFactory struct{ set *counterSet }

func (f countingFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	return &countingInterceptor{set: f.set}, nil
}

func (i *countingInterceptor) BindRemoteStream(info *interceptor.StreamInfo, reader interceptor.RTPReader) interceptor.RTPReader {
	c := i.set.stream(true, info.SSRC)
	return interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, a, err := reader.Read(b, a)
		if err == nil {
			c.packets.Add(1)
			c.bytes.Add(uint64(n))
		}
		return n, a, err
	})
}

func (i *countingInterceptor) BindLocalStream(info *interceptor.StreamInfo, writer interceptor.RTPWriter) interceptor.RTPWriter {
	c := i.set.stream(false, info.SSRC)
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		n, err := writer.Write(h, payload, a)
		if err == nil {
			c.packets.Add(1)
			c.bytes.Add(uint64(n))
		}
		return n, err
	})
}

// BindRTCPWriter counts the NACKs strata sends: loss on the streams it receives.
func (i *countingInterceptor) BindRTCPWriter(writer interceptor.RTCPWriter) interceptor.RTCPWriter {
	return interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, a interceptor.Attributes) (int, error) {
		i.countNACKs(true, pkts)
		return writer.Write(pkts, a)
	})
}

// BindRTCPReader counts the NACKs the peer sends: loss on the streams strata sends.
func (i *countingInterceptor) BindRTCPReader(reader interceptor.RTCPReader) interceptor.RTCPReader {
	return interceptor.RTCPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, a, err := reader.Read(b, a)
		if err != nil {
			return n, a, err
		}
		if a == nil {
			a = interceptor.Attributes{}
		}
		// The parse is cached in the attributes, so the interceptors after this one reuse it.
		if pkts, perr := a.GetRTCPPackets(b[:n]); perr == nil {
			i.countNACKs(false, pkts)
		}
		return n, a, err
	})
}

func (i *countingInterceptor) countNACKs(incoming bool, pkts []rtcp.Packet) {
	for _, p := range pkts {
		nack, ok := p.(*rtcp.TransportLayerNack)
		if !ok {
			continue
		}
		c := i.set.lookup(incoming, nack.MediaSSRC)
		if c == nil {
			continue
		}
		c.nacked.Add(nackedPackets(nack))
	}
}

// nackedPackets is the number of sequence numbers a NACK asks for (PacketList without allocating).
func nackedPackets(n *rtcp.TransportLayerNack) uint64 {
	var total uint64
	for _, pair := range n.Nacks {
		total += 1 + uint64(bits.OnesCount16(uint16(pair.LostPackets)))
	}
	return total
}
