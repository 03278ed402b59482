// Package pcap writes a handle's clear RTP and RTCP to a pcap file, as Janus's text2pcap does for
// the admin API's start_pcap: each packet wrapped in dummy Ethernet, IPv4 and UDP headers (link
// type Ethernet), incoming ones from 10.1.1.1:1000 to 10.2.2.2:2000, outgoing ones the other way,
// so Wireshark shows the direction and decodes the UDP payload as RTP or RTCP with "Decode As"
// (or its rtp_udp heuristic).
//
// The media path never waits for the disk: Packet copies a packet into a free slot of a fixed
// pool and hands it to the writer goroutine over a bounded channel; with no free slot the packet is
// dropped and counted. Nothing is allocated per packet, and a PeerConnection without a capture
// pays one atomic load per packet (internal/peer).
package pcap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// LinkTypeEthernet is the pcap link type of the files (the dummy headers are Ethernet's).
	LinkTypeEthernet = 1
	// Snaplen is the snapshot length written in the file header, Janus's.
	Snaplen = 65535
	// HeaderLen is the dummy Ethernet + IPv4 + UDP headers in front of every packet.
	HeaderLen = 14 + 20 + 8
	// SlotSize is the most of a packet kept (larger ones are cut, their original length recorded).
	SlotSize = 1600
	// DefaultQueue is the number of packets that may wait for the disk.
	DefaultQueue = 1024

	// The dummy addresses and ports, Janus's: incoming packets go from the peer (10.1.1.1:1000)
	// to strata (10.2.2.2:2000).
	PeerPort   = 1000
	StrataPort = 2000
)

var (
	PeerIP   = [4]byte{10, 1, 1, 1}
	StrataIP = [4]byte{10, 2, 2, 2}
)

// slot is one packet waiting for the writer.
type slot struct {
	at       time.Time
	incoming bool
	n        int // bytes kept in data
	orig     int // the packet's length
	data     [SlotSize]byte
}

// Capture is one open pcap file. Its methods are safe for concurrent use.
type Capture struct {
	path     string
	truncate int
	f        *os.File

	free    chan *slot
	queue   chan *slot
	mu      sync.RWMutex // held for reading by Packet, for writing by Close
	closed  bool
	done    chan struct{}
	dropped atomic.Uint64
	written atomic.Uint64
	err     error // the first write error, read after done
}

// Create opens path (it must not exist: an existing file is not appended to, which would put a
// second file header in the middle of it), writes the file header and starts the writer. truncate
// > 0 keeps at most that many bytes of each packet (Janus's option); queue <= 0 is DefaultQueue.
func Create(path string, truncate, queue int) (*Capture, error) {
	if truncate < 0 {
		return nil, errors.New("truncate must not be negative")
	}
	if queue <= 0 {
		queue = DefaultQueue
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	var hdr [24]byte
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4) // microsecond timestamps
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], Snaplen)
	binary.LittleEndian.PutUint32(hdr[20:], LinkTypeEthernet)
	if _, err := f.Write(hdr[:]); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	c := &Capture{path: path, truncate: truncate, f: f, free: make(chan *slot, queue), queue: make(chan *slot, queue),
		done: make(chan struct{})}
	for range queue {
		c.free <- &slot{}
	}
	go c.run()
	return c, nil
}

// Path is the file's path.
func (c *Capture) Path() string { return c.path }

// Dropped is the number of packets dropped because the writer fell behind.
func (c *Capture) Dropped() uint64 { return c.dropped.Load() }

// Written is the number of packets written to the file so far.
func (c *Capture) Written() uint64 { return c.written.Load() }

// Packet records one packet (RTP or RTCP, clear) in the given direction. It copies what it keeps
// and never blocks; after Close it does nothing.
func (c *Capture) Packet(incoming bool, b []byte) {
	c.PacketParts(incoming, b)
}

// PacketParts records a packet given in parts (an RTP header, its payload and its padding),
// without joining them first.
func (c *Capture) PacketParts(incoming bool, parts ...[]byte) {
	orig := 0
	for _, p := range parts {
		orig += len(p)
	}
	if orig == 0 {
		return
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return
	}
	var s *slot
	select {
	case s = <-c.free:
	default:
		c.dropped.Add(1)
		return
	}
	limit := SlotSize
	if c.truncate > 0 && c.truncate < limit {
		limit = c.truncate
	}
	n := 0
	for _, p := range parts {
		n += copy(s.data[n:limit], p)
	}
	s.at, s.incoming, s.n, s.orig = time.Now(), incoming, n, orig
	c.queue <- s // never blocks: there are as many places as slots
}

// Close stops taking packets, writes those waiting and closes the file. It returns the first write
// error, if any. It is idempotent.
func (c *Capture) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	<-c.done
	return c.err
}

func (c *Capture) run() {
	defer close(c.done)
	w := bufio.NewWriterSize(c.f, 64<<10)
	var rec [16 + HeaderLen]byte
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case s, ok := <-c.queue:
			if !ok {
				c.finish(w)
				return
			}
			if c.err == nil {
				frame(rec[:], s)
				if _, err := w.Write(rec[:]); err != nil {
					c.err = err
				} else if _, err := w.Write(s.data[:s.n]); err != nil {
					c.err = err
				} else {
					c.written.Add(1)
				}
			}
			c.free <- s
		case <-tick.C: // what was captured is on disk within a second
			if c.err == nil {
				c.err = w.Flush()
			}
		}
	}
}

func (c *Capture) finish(w *bufio.Writer) {
	if c.err == nil {
		c.err = w.Flush()
	}
	if err := c.f.Close(); c.err == nil && err != nil {
		c.err = err
	}
	if c.err != nil {
		c.err = fmt.Errorf("pcap %s: %w", c.path, c.err)
	}
}

// frame fills the pcap record header and the dummy Ethernet, IPv4 and UDP headers of s.
func frame(b []byte, s *slot) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(s.at.Unix()))
	le.PutUint32(b[4:], uint32(s.at.Nanosecond()/1000))
	le.PutUint32(b[8:], uint32(HeaderLen+s.n))
	le.PutUint32(b[12:], uint32(HeaderLen+s.orig))
	Headers(b[16:16+HeaderLen], s.incoming, s.orig)
}

// Headers writes the dummy Ethernet, IPv4 and UDP headers of a payload of n bytes into b
// (HeaderLen bytes).
func Headers(b []byte, incoming bool, n int) {
	be := binary.BigEndian
	eth := b[:14]
	clear(eth[:12]) // zero MAC addresses, as Janus's
	be.PutUint16(eth[12:], 0x0800)
	ip := b[14:34]
	ip[0], ip[1] = 0x45, 0
	be.PutUint16(ip[2:], uint16(20+8+n))
	be.PutUint16(ip[4:], 0)
	be.PutUint16(ip[6:], 0x4000) // don't fragment
	ip[8], ip[9] = 64, 17        // TTL, UDP
	be.PutUint16(ip[10:], 0)
	src, dst, sport, dport := StrataIP, PeerIP, uint16(StrataPort), uint16(PeerPort)
	if incoming {
		src, dst, sport, dport = PeerIP, StrataIP, PeerPort, StrataPort
	}
	copy(ip[12:16], src[:])
	copy(ip[16:20], dst[:])
	be.PutUint16(ip[10:], checksum(ip))
	udp := b[34:42]
	be.PutUint16(udp[0:], sport)
	be.PutUint16(udp[2:], dport)
	be.PutUint16(udp[4:], uint16(8+n))
	be.PutUint16(udp[6:], 0) // no checksum
}

func checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
