package rtpbridge

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/srtp/v3"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// plainSender is the sink of a browser track's Receiver that sends it to the plain peer from the
// leg's own RTP socket (symmetric RTP), to the latched address. It renumbers the stream onto its
// own SSRC and sequence (so that the DTMF events it inserts fit in), maps the browser's payload
// types onto the plain peer's and leaves the header extensions, which only the browser
// understands, out. The lock serialises the media path with DTMF and RTCP, which share the SRTP
// context and the numbering; it is not contended per packet otherwise.
type plainSender struct {
	conn *net.UDPConn
	dst  *atomic.Pointer[netip.AddrPort]
	ssrc uint32

	// enabled: the direction lets strata send (not on hold towards a recvonly/inactive peer).
	enabled atomic.Bool

	mu        sync.Mutex
	ptMap     [128]uint8 // browser payload type → plain payload type; 0xff: not sent
	clockRate uint32
	ctx       *srtp.Context // nil: plain RTP
	seq       uint16
	lastTS    uint32        // the newest timestamp sent
	lastAt    time.Duration // when it was sent (sfu.Now)
	started   bool
	hdr       rtp.Header
	ext       [8]rtp.Extension
	plain     [media.SlotSize]byte
	cipher    [media.SlotSize + 32]byte

	packets, bytes, failures atomic.Uint64
	octets                   atomic.Uint64 // payload bytes, for sender reports
}

const notSent = 0xff

func newPlainSender(conn *net.UDPConn, dst *atomic.Pointer[netip.AddrPort], clockRate uint32) *plainSender {
	s := &plainSender{conn: conn, dst: dst, ssrc: randomSSRC(), seq: uint16(randomSSRC()), clockRate: clockRate}
	for i := range s.ptMap {
		s.ptMap[i] = notSent
	}
	return s
}

// setFormats says which browser payload types go out as which plain ones (codec, telephone-event).
func (s *plainSender) setFormats(m map[uint8]uint8) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.ptMap {
		s.ptMap[i] = notSent
	}
	for from, to := range m {
		s.ptMap[from&0x7f] = to
	}
}

// setSRTP switches encryption on (key) or off (nil); the numbering goes on.
func (s *plainSender) setSRTP(ctx *srtp.Context) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
}

// WriteRTP implements sfu.Sink.
func (s *plainSender) WriteRTP(p *sfu.Packet) {
	if !s.enabled.Load() {
		return
	}
	payload := p.Payload()
	s.mu.Lock()
	pt := s.ptMap[p.Header.PayloadType&0x7f]
	if pt == notSent || len(payload)+media.HeaderSize > len(s.plain) {
		s.mu.Unlock()
		return
	}
	s.lastTS, s.lastAt, s.started = p.Header.Timestamp, p.At, true
	s.sendLocked(pt, p.Header.Marker, p.Header.Timestamp, payload)
	s.mu.Unlock()
}

// Resync implements sfu.Sink: the sender numbers its output itself, so a resumed stream goes on.
func (s *plainSender) Resync() {}

// sendLocked writes one packet: a 12-byte header and the payload.
func (s *plainSender) sendLocked(pt uint8, marker bool, ts uint32, payload []byte) {
	b := s.plain[:media.HeaderSize+len(payload)]
	b[0] = 0x80
	b[1] = pt & 0x7f
	if marker {
		b[1] |= 0x80
	}
	s.seq++
	binary.BigEndian.PutUint16(b[2:4], s.seq)
	binary.BigEndian.PutUint32(b[4:8], ts)
	binary.BigEndian.PutUint32(b[8:12], s.ssrc)
	copy(b[media.HeaderSize:], payload)
	if s.ctx != nil {
		s.hdr.Extensions, s.hdr.CSRC = s.ext[:0], s.hdr.CSRC[:0]
		out, err := s.ctx.EncryptRTP(s.cipher[:0], b, &s.hdr)
		if err != nil {
			s.failures.Add(1)
			return
		}
		b = out
	}
	dst := s.dst.Load()
	if dst == nil {
		return
	}
	if _, err := s.conn.WriteToUDPAddrPort(b, *dst); err != nil {
		s.failures.Add(1)
		return
	}
	s.packets.Add(1)
	s.bytes.Add(uint64(len(b)))
	s.octets.Add(uint64(len(payload)))
}

// nowTS is the stream's timestamp now: the last one sent advanced by the time since, so that an
// inserted DTMF event and a sender report stay on the media's clock.
func (s *plainSender) nowTS(now time.Duration) uint32 {
	if !s.started {
		s.lastTS, s.lastAt, s.started = randomSSRC(), now, true
	}
	return s.lastTS + uint32(int64(now-s.lastAt)*int64(s.clockRate)/int64(time.Second))
}

// sendEvent inserts one telephone-event packet (plain payload type pt) at timestamp ts.
func (s *plainSender) sendEvent(pt uint8, marker bool, ts uint32, payload []byte) {
	if !s.enabled.Load() {
		return
	}
	s.mu.Lock()
	s.sendLocked(pt, marker, ts, payload)
	s.mu.Unlock()
}
