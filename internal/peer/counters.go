package peer

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/rtcpview"
)

// streamCounters are the per-SSRC counters strata keeps itself, for `media` and `slowlink` events
// and bitrates. They are updated with atomics only: nothing is locked or allocated per packet.
type streamCounters struct {
	packets atomic.Uint64
	bytes   atomic.Uint64
	// nacked counts sequence numbers asked for again: by strata for a stream it receives, by the
	// remote peer for a stream strata sends.
	nacked atomic.Uint64
	// Keyframe requests about the stream: the remote peer's for a stream strata sends, strata's
	// own for one it receives. Then, for a stream strata sends, the remote peer's last reception
	// report (cumulative loss, jitter in RTP units, round-trip time from LSR/DLSR).
	plis, firs atomic.Uint64
	reported   atomic.Bool
	reportLost atomic.Int64
	reportJit  atomic.Uint32
	rttMicros  atomic.Int64
	// kind is the stream's media kind, from its codec when it was bound (for the metrics).
	kind MediaKind
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

func (s *counterSet) stream(incoming bool, ssrc uint32, kind MediaKind) *streamCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.out
	if incoming {
		m = s.in
	}
	c, ok := m[ssrc]
	if !ok {
		c = &streamCounters{kind: kind}
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
	rtt func(time.Duration) // the factory's RTT observer, or nil
}

type countingFactory struct {
	set *counterSet
	rtt func(time.Duration)
}

func (f countingFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	return &countingInterceptor{set: f.set, rtt: f.rtt}, nil
}

func (i *countingInterceptor) BindRemoteStream(info *interceptor.StreamInfo, reader interceptor.RTPReader) interceptor.RTPReader {
	c := i.set.stream(true, info.SSRC, kindOf(info.MimeType))
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
	c := i.set.stream(false, info.SSRC, kindOf(info.MimeType))
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		n, err := writer.Write(h, payload, a)
		if err == nil {
			c.packets.Add(1)
			c.bytes.Add(uint64(n))
		}
		return n, err
	})
}

// BindRTCPWriter counts the NACKs strata sends (loss on the streams it receives) and its
// keyframe requests.
func (i *countingInterceptor) BindRTCPWriter(writer interceptor.RTCPWriter) interceptor.RTCPWriter {
	return interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, a interceptor.Attributes) (int, error) {
		i.countSent(pkts)
		return writer.Write(pkts, a)
	})
}

// BindRTCPReader reads what the peer says about the streams strata sends (NACKs, PLIs, FIRs,
// reception reports) from the raw packets, without unmarshalling them into Pion's structures: on a
// subscriber's PeerConnection nothing else needs them, and that unmarshal (with its garbage) was
// the largest cost of RTCP under load.
func (i *countingInterceptor) BindRTCPReader(reader interceptor.RTCPReader) interceptor.RTCPReader {
	return interceptor.RTCPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, a, err := reader.Read(b, a)
		if err == nil {
			i.readRTCP(b[:n], time.Now())
		}
		return n, a, err
	})
}

func (i *countingInterceptor) readRTCP(b []byte, now time.Time) {
	it := rtcpview.Iterate(b)
	for p, ok := it.Next(); ok; p, ok = it.Next() {
		switch p.Kind() {
		case rtcpview.KindNACK:
			if nack, err := rtcpview.ParseNACK(p); err == nil {
				if c := i.set.lookup(false, nack.MediaSSRC); c != nil {
					c.nacked.Add(uint64(nack.Count()))
				}
			}
		case rtcpview.KindPLI:
			if pli, err := rtcpview.ParsePLI(p); err == nil {
				if c := i.set.lookup(false, pli.MediaSSRC); c != nil {
					c.plis.Add(1)
				}
			}
		case rtcpview.KindFIR:
			if fir, err := rtcpview.ParseFIR(p); err == nil {
				for k := range fir.Len() {
					if c := i.set.lookup(false, fir.Entry(k).SSRC); c != nil {
						c.firs.Add(1)
					}
				}
			}
		case rtcpview.KindRR:
			if rr, err := rtcpview.ParseReceiverReport(p); err == nil {
				i.onReports(rr.Reports, now)
			}
		case rtcpview.KindSR:
			if sr, err := rtcpview.ParseSenderReport(p); err == nil {
				i.onReports(sr.Reports, now)
			}
		}
	}
}

func (i *countingInterceptor) onReports(blocks rtcpview.ReportBlocks, now time.Time) {
	for k := range blocks.Len() {
		r := blocks.At(k)
		c := i.set.lookup(false, r.SSRC)
		if c == nil {
			continue
		}
		c.reportLost.Store(int64(r.TotalLost))
		c.reportJit.Store(r.Jitter)
		if rtt, ok := r.RTT(now); ok {
			c.rttMicros.Store(rtt.Microseconds())
			if i.rtt != nil {
				i.rtt(rtt)
			}
		}
		c.reported.Store(true)
	}
}

// countSent counts what strata asks of the senders of the streams it receives: retransmissions
// (NACKs) and keyframes (PLI, FIR), on the counters of the stream asked about.
func (i *countingInterceptor) countSent(pkts []rtcp.Packet) {
	for _, p := range pkts {
		switch p := p.(type) {
		case *rtcp.TransportLayerNack:
			if c := i.set.lookup(true, p.MediaSSRC); c != nil {
				c.nacked.Add(nackedPackets(p))
			}
		case *rtcp.PictureLossIndication:
			if c := i.set.lookup(true, p.MediaSSRC); c != nil {
				c.plis.Add(1)
			}
		case *rtcp.FullIntraRequest:
			for _, e := range p.FIR {
				if c := i.set.lookup(true, e.SSRC); c != nil {
					c.firs.Add(1)
				}
			}
		}
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
