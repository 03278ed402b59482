package file

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// An Ogg page (RFC 3533 §6): a 27-byte header, a lacing table of up to 255 segment sizes and the
// body. Packets are split over segments: a packet ends at the first segment shorter than 255
// bytes, and one that does not end on a page continues on the next page of its stream.
const (
	oggHeaderLen = 27
	oggMaxBody   = 255 * 255
	// oggMaxPacket bounds a packet assembled over pages: far above any Opus packet (120 ms of
	// the largest frames is under 8 KB), far below what a crafted file could make us buffer.
	oggMaxPacket = 64 << 10
)

// Page header flags.
const (
	oggContinued = 0x01
	oggBOS       = 0x02
)

// oggPage is the page oggReader read last; its slices are valid until the next read.
type oggPage struct {
	flags   byte
	granule int64 // -1: no packet ends on this page
	serial  uint32
	lacing  []byte
	body    []byte
}

// oggReader reads pages, checking their structure and checksum, into fixed buffers.
type oggReader struct {
	r    *bufio.Reader
	hdr  [oggHeaderLen]byte
	lace [255]byte
	body [oggMaxBody]byte
	page oggPage
}

var errOggTruncated = errors.New("truncated Ogg page")

// next reads the next page; io.EOF at the end of the file, between pages.
func (o *oggReader) next() (*oggPage, error) {
	if _, err := io.ReadFull(o.r, o.hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, errOggTruncated
	}
	if string(o.hdr[:4]) != "OggS" || o.hdr[4] != 0 {
		return nil, errors.New("not an Ogg page (bad capture pattern or version)")
	}
	lacing := o.lace[:o.hdr[26]]
	if _, err := io.ReadFull(o.r, lacing); err != nil {
		return nil, errOggTruncated
	}
	size := 0
	for _, l := range lacing {
		size += int(l)
	}
	body := o.body[:size]
	if _, err := io.ReadFull(o.r, body); err != nil {
		return nil, errOggTruncated
	}
	want := binary.LittleEndian.Uint32(o.hdr[22:26])
	binary.LittleEndian.PutUint32(o.hdr[22:26], 0)
	crc := oggCRC(oggCRC(oggCRC(0, o.hdr[:]), lacing), body)
	if crc != want {
		return nil, fmt.Errorf("checksum mismatch in an Ogg page (%08x, header says %08x)", crc, want)
	}
	o.page = oggPage{
		flags:   o.hdr[5],
		granule: int64(binary.LittleEndian.Uint64(o.hdr[6:14])),
		serial:  binary.LittleEndian.Uint32(o.hdr[14:18]),
		lacing:  lacing,
		body:    body,
	}
	return &o.page, nil
}

// oggCRCTable is the table of Ogg's CRC-32: polynomial 0x04c11db7, not reflected, no final
// inversion (not the IEEE variant hash/crc32 computes).
var oggCRCTable = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

func oggCRC(crc uint32, b []byte) uint32 {
	for _, x := range b {
		crc = crc<<8 ^ oggCRCTable[byte(crc>>24)^x]
	}
	return crc
}

// oggPackets assembles the packets of one logical stream (serial) from pages. Pages of other
// streams are skipped.
type oggPackets struct {
	rd     oggReader
	serial uint32
	// cont accumulates a packet continued over pages; joined holds the last one completed, so
	// that it stays valid while the next continuation starts.
	cont, joined []byte
	pkts         [][]byte // the packets completed on the current page
}

func (p *oggPackets) reset(r io.Reader, serial uint32) {
	if p.rd.r == nil {
		p.rd.r = bufio.NewReaderSize(r, 64<<10)
	} else {
		p.rd.r.Reset(r)
	}
	p.serial = serial
	p.cont, p.joined, p.pkts = p.cont[:0], p.joined[:0], p.pkts[:0]
}

// nextPage reads pages until one of the stream completes at least one packet, and returns the
// packets (valid until the next call) and the page's granule position. io.EOF at the end.
func (p *oggPackets) nextPage() ([][]byte, int64, error) {
	for {
		pg, err := p.rd.next()
		if err != nil {
			return nil, 0, err
		}
		if pg.serial != p.serial {
			continue
		}
		if err := p.split(pg); err != nil {
			return nil, 0, err
		}
		if len(p.pkts) > 0 {
			return p.pkts, pg.granule, nil
		}
	}
}

// split cuts a page of the stream into packets along its lacing values.
func (p *oggPackets) split(pg *oggPage) error {
	p.pkts = p.pkts[:0]
	continued := pg.flags&oggContinued != 0
	if !continued && len(p.cont) > 0 {
		return errors.New("corrupt Ogg stream: a packet is not continued on the next page")
	}
	skip := continued && len(p.cont) == 0 // a continuation whose start we never saw
	start, size := 0, 0
	for i, l := range pg.lacing {
		size += int(l)
		if l == 255 && i < len(pg.lacing)-1 {
			continue
		}
		seg := pg.body[start : start+size]
		start, size = start+size, 0
		if l == 255 { // the packet goes on on the next page
			if !skip {
				if len(p.cont)+len(seg) > oggMaxPacket {
					return fmt.Errorf("an Ogg packet over %d bytes", oggMaxPacket)
				}
				p.cont = append(p.cont, seg...)
			}
			break
		}
		switch {
		case skip:
			skip = false
		case len(p.cont) > 0:
			if len(p.cont)+len(seg) > oggMaxPacket {
				return fmt.Errorf("an Ogg packet over %d bytes", oggMaxPacket)
			}
			p.joined = append(p.joined[:0], p.cont...)
			p.joined = append(p.joined, seg...)
			p.cont = p.cont[:0]
			p.pkts = append(p.pkts, p.joined)
		default:
			p.pkts = append(p.pkts, seg)
		}
	}
	return nil
}
