package rtcpview

// Sizes of the parts of sender and receiver reports (RFC 3550 §6.4).
const (
	senderInfoSize  = 24 // sender SSRC + NTP (8) + RTP timestamp + packet count + octet count
	ReportBlockSize = 24
)

// SenderReport is a view of an SR (RFC 3550 §6.4.1).
type SenderReport struct {
	SSRC        uint32 // SSRC of the sender
	NTPTime     uint64 // NTP timestamp: seconds since 1900 in the upper 32 bits, fraction below
	RTPTime     uint32
	PacketCount uint32
	OctetCount  uint32
	Reports     ReportBlocks
	// Extensions are the profile-specific extension bytes after the report blocks (usually none).
	Extensions []byte
}

// ReceiverReport is a view of an RR (RFC 3550 §6.4.2).
type ReceiverReport struct {
	SSRC       uint32 // SSRC of the packet sender
	Reports    ReportBlocks
	Extensions []byte
}

// ReportBlocks are the reception report blocks of an SR or RR, read one at a time:
//
//	for i := 0; i < rr.Reports.Len(); i++ { b := rr.Reports.At(i) ... }
type ReportBlocks struct {
	b []byte // exactly Len()*ReportBlockSize bytes
}

// ReportBlock is one reception report block.
type ReportBlock struct {
	SSRC         uint32 // the source this block is about
	FractionLost uint8  // fraction lost since the last report, in 1/256
	// TotalLost is the cumulative number of packets lost: a signed 24-bit value, negative when
	// duplicates outnumber losses (RFC 3550 §6.4.1).
	TotalLost     int32
	HighestSeq    uint32 // extended highest sequence number received
	Jitter        uint32 // interarrival jitter in RTP timestamp units
	LastSR        uint32 // LSR: the middle 32 bits of the last SR's NTP timestamp
	DelaySinceLSR uint32 // DLSR in 1/65536 s
}

// ParseSenderReport reads an SR. Its report count must fit in the body; what follows the blocks
// is returned as Extensions.
func ParseSenderReport(p Packet) (SenderReport, error) {
	if p.Type != TypeSR {
		return SenderReport{}, ErrType
	}
	b := p.Body
	if len(b) < senderInfoSize {
		return SenderReport{}, ErrShort
	}
	blocks, ext, err := reportBlocks(b[senderInfoSize:], p.Count)
	if err != nil {
		return SenderReport{}, err
	}
	return SenderReport{
		SSRC:        be32(b[0:4]),
		NTPTime:     uint64(be32(b[4:8]))<<32 | uint64(be32(b[8:12])),
		RTPTime:     be32(b[12:16]),
		PacketCount: be32(b[16:20]),
		OctetCount:  be32(b[20:24]),
		Reports:     blocks,
		Extensions:  ext,
	}, nil
}

// ParseReceiverReport reads an RR.
func ParseReceiverReport(p Packet) (ReceiverReport, error) {
	if p.Type != TypeRR {
		return ReceiverReport{}, ErrType
	}
	if len(p.Body) < 4 {
		return ReceiverReport{}, ErrShort
	}
	blocks, ext, err := reportBlocks(p.Body[4:], p.Count)
	if err != nil {
		return ReceiverReport{}, err
	}
	return ReceiverReport{SSRC: be32(p.Body[0:4]), Reports: blocks, Extensions: ext}, nil
}

func reportBlocks(b []byte, count uint8) (ReportBlocks, []byte, error) {
	n := int(count) * ReportBlockSize
	if n > len(b) {
		return ReportBlocks{}, nil, ErrShort
	}
	return ReportBlocks{b: b[:n]}, b[n:], nil
}

// Len is the number of report blocks.
func (r ReportBlocks) Len() int { return len(r.b) / ReportBlockSize }

// At returns block i; it returns the zero block when i is out of range.
func (r ReportBlocks) At(i int) ReportBlock {
	if i < 0 || i >= r.Len() {
		return ReportBlock{}
	}
	b := r.b[i*ReportBlockSize : (i+1)*ReportBlockSize]
	return ReportBlock{
		SSRC:          be32(b[0:4]),
		FractionLost:  b[4],
		TotalLost:     signed24(b[5:8]),
		HighestSeq:    be32(b[8:12]),
		Jitter:        be32(b[12:16]),
		LastSR:        be32(b[16:20]),
		DelaySinceLSR: be32(b[20:24]),
	}
}

// Find returns the block about ssrc, if there is one.
func (r ReportBlocks) Find(ssrc uint32) (ReportBlock, bool) {
	for i := 0; i < r.Len(); i++ {
		if be32(r.b[i*ReportBlockSize:]) == ssrc {
			return r.At(i), true
		}
	}
	return ReportBlock{}, false
}
