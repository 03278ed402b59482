package record

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// The formats a reader knows, as janus-pp-rec tells them apart: MJR00002 (frames "MEET" + a time),
// MJR00001 (the same info header, frames "MEETECHO" without a time) and the oldest one, which has
// no JSON: a "MEETECHO" frame holding "audio" or "video" (Opus or VP8) comes first.
const (
	legacyMagic  = "MJR00001"
	oldestMagic  = "MEETECHO"
	oldestHeader = 5 // the length of "audio" and "video"
)

// maxRTP is the longest RTP packet a frame may hold: what janus-pp-rec reads (it skips longer
// ones as not RTP), and what strata records (a packet longer than a ring slot is dropped).
const maxRTP = 1500

// minRTP is an RTP header without CSRCs; janus-pp-rec skips shorter frames as not RTP.
const minRTP = 12

// dataTimeLen is the time a data recording's frame starts with: µs since the Unix epoch.
const dataTimeLen = 8

// ErrNoMedia is what OpenMJR says of a recording closed before its first packet: the file holds
// the magic alone, and nothing says what it would have recorded.
var ErrNoMedia = errors.New("record: the recording holds no packets")

// ErrBadFrame is wrapped by the error Next returns for a frame that was read whole but does not
// hold what the recording holds (a packet shorter than an RTP header, a data frame without its
// time): a reader that skips it can call Next again and get the frame after it.
var ErrBadFrame = errors.New("record: bad frame")

// MJRInfo is a recording's info header.
type MJRInfo struct {
	// Version is 2 for MJR00002, 1 for the formats before it, whose frames have no time.
	Version int
	// Type is "a" (audio), "v" (video) or "d" (data).
	Type string
	// Codec is the codec as Janus names it ("opus", "vp8", "h264", ..., "text" or "binary").
	Codec             string
	Fmtp, Description string
	// Extensions are the RTP header extensions the packets carry, by id.
	Extensions map[int]string
	// Created is when the recording was created, FirstPacket when its first packet came (zero in
	// the oldest format).
	Created, FirstPacket time.Time
	// E2EE says the media is end-to-end encrypted; OpusRED is the payload type of Opus's
	// redundancy (RED) when the recording carries it.
	E2EE    bool
	OpusRED int
}

// jsonInfo is the info header as Janus writes it; pointers tell a missing field from a zero.
type jsonInfo struct {
	Type        *string           `json:"t"`
	Codec       *string           `json:"c"`
	Fmtp        string            `json:"f"`
	Description string            `json:"d"`
	Extensions  map[string]string `json:"x"`
	Created     *int64            `json:"s"`
	FirstPacket *int64            `json:"u"`
	E2EE        bool              `json:"e"`
	OpusRED     int               `json:"or"`
}

// Frame is one packet of a recording.
type Frame struct {
	// RTP is the packet as recorded; it is valid until the next call of Next. In a data recording
	// it is the message, without the time the frame starts with.
	RTP []byte
	// At is the packet's time since the recording's first packet (always zero in version 1). In a
	// data recording it is the message's time since the recording was created.
	At time.Duration
}

// MJRReader reads a .mjr recording frame by frame, in file order.
type MJRReader struct {
	r      *bufio.Reader
	c      io.Closer
	info   MJRInfo
	offset int64
	buf    [1<<16 - 1]byte // the longest frame a 2-byte length can give
}

// OpenMJR opens the recording at path and reads its info header.
func OpenMJR(path string) (*MJRReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	r, err := NewMJRReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.c = f
	return r, nil
}

// NewMJRReader reads a recording from r, starting with its info header.
func NewMJRReader(r io.Reader) (*MJRReader, error) {
	m := &MJRReader{r: bufio.NewReaderSize(r, 64<<10)}
	if err := m.readHeader(); err != nil {
		return nil, err
	}
	return m, nil
}

// Info is the recording's info header.
func (m *MJRReader) Info() MJRInfo { return m.info }

// Close closes the file OpenMJR opened.
func (m *MJRReader) Close() error {
	if m.c == nil {
		return nil
	}
	return m.c.Close()
}

// readHeader reads the magic and the info header.
func (m *MJRReader) readHeader() error {
	magic, err := m.read(len(fileMagic))
	switch {
	case err == io.EOF:
		return errors.New("record: empty file, not a recording")
	case err != nil:
		return fmt.Errorf("record: not a recording: %w", err)
	}
	switch string(magic) {
	case fileMagic:
		m.info.Version = 2
	case legacyMagic:
		m.info.Version = 1
	case oldestMagic:
		m.info.Version = 1
		return m.readOldestHeader()
	default:
		return fmt.Errorf("record: not a recording: the file starts with %q, not %q", magic, fileMagic)
	}
	n, err := m.length()
	if err == io.EOF {
		return ErrNoMedia
	}
	if err != nil {
		return m.truncated("info header", err)
	}
	if n == 0 {
		return errors.New("record: the info header is empty")
	}
	if n > maxInfo {
		return fmt.Errorf("record: info header of %d bytes, longer than the %d a recording may have", n, maxInfo)
	}
	b, err := m.read(n)
	if err != nil {
		return m.truncated("info header", err)
	}
	return m.parseInfo(b)
}

// readOldestHeader reads the oldest format's header frame, which says "audio" or "video".
func (m *MJRReader) readOldestHeader() error {
	n, err := m.length()
	if err != nil {
		return m.truncated("header", err)
	}
	if n != oldestHeader {
		return fmt.Errorf("record: header of %d bytes, not the %d of \"audio\" or \"video\"", n, oldestHeader)
	}
	b, err := m.read(n)
	if err != nil {
		return m.truncated("header", err)
	}
	switch string(b) {
	case "audio":
		m.info.Type, m.info.Codec = "a", "opus"
	case "video":
		m.info.Type, m.info.Codec = "v", "vp8"
	default:
		return fmt.Errorf("record: header %q, neither \"audio\" nor \"video\"", b)
	}
	return nil
}

// parseInfo checks the info header as janus-pp-rec does: a type, a codec and both times.
func (m *MJRReader) parseInfo(b []byte) error {
	var j jsonInfo
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("record: info header: %w", err)
	}
	switch {
	case j.Type == nil || (*j.Type != "a" && *j.Type != "v" && *j.Type != "d"):
		return fmt.Errorf("record: info header: type (t) missing or not a, v or d: %s", b)
	case j.Codec == nil || *j.Codec == "":
		return fmt.Errorf("record: info header: codec (c) missing: %s", b)
	case j.Created == nil || j.FirstPacket == nil:
		return fmt.Errorf("record: info header: times (s and u) missing: %s", b)
	}
	i := &m.info
	i.Type, i.Codec, i.Fmtp, i.Description = *j.Type, *j.Codec, j.Fmtp, j.Description
	i.Created, i.FirstPacket = time.UnixMicro(*j.Created), time.UnixMicro(*j.FirstPacket)
	i.E2EE, i.OpusRED = j.E2EE, j.OpusRED
	for k, v := range j.Extensions {
		id, err := strconv.Atoi(k)
		if err != nil || id < 1 || id > 255 {
			return fmt.Errorf("record: info header: extension id %q is not a number from 1 to 255", k)
		}
		if i.Extensions == nil {
			i.Extensions = map[int]string{}
		}
		i.Extensions[id] = v
	}
	return nil
}

// Next returns the next frame, or io.EOF after the last one. A file that ends inside a frame (a
// recording cut short by a crash) gives an error wrapping io.ErrUnexpectedEOF; the frames before
// it are whole.
func (m *MJRReader) Next() (Frame, error) {
	for {
		at := m.offset
		magic, err := m.read(len(fileMagic))
		if err == io.EOF {
			return Frame{}, io.EOF
		}
		if err != nil {
			return Frame{}, m.truncated("frame header", err)
		}
		var f Frame
		skip := false
		switch {
		case m.info.Version == 2 && string(magic[:4]) == frameMagic:
			f.At = time.Duration(binary.BigEndian.Uint32(magic[4:])) * time.Millisecond
		case m.info.Version == 1 && string(magic) == oldestMagic:
		case string(magic) == fileMagic || string(magic) == legacyMagic:
			skip = true // another header, which janus-pp-rec skips too
		default:
			return Frame{}, fmt.Errorf("record: frame at offset %d starts with %q, not %q", at, magic, frameMagic)
		}
		n, err := m.length()
		if err != nil {
			return Frame{}, m.truncated("frame header", err)
		}
		b, err := m.read(n)
		if err != nil {
			return Frame{}, m.truncated(fmt.Sprintf("frame at offset %d", at), err)
		}
		if skip {
			continue
		}
		if err := m.frame(&f, b, at); err != nil {
			return Frame{}, err
		}
		return f, nil
	}
}

// frame fills f with the frame's contents b, checking they are what the recording holds.
func (m *MJRReader) frame(f *Frame, b []byte, at int64) error {
	if m.info.Type == "d" {
		if len(b) < dataTimeLen {
			return fmt.Errorf("%w: data frame at offset %d has %d bytes, fewer than its time", ErrBadFrame, at, len(b))
		}
		when := time.UnixMicro(int64(binary.BigEndian.Uint64(b)))
		f.RTP, f.At = b[dataTimeLen:], when.Sub(m.info.Created)
		return nil
	}
	if len(b) < minRTP || len(b) > maxRTP {
		return fmt.Errorf("%w: frame at offset %d has %d bytes, not an RTP packet (%d to %d)", ErrBadFrame, at, len(b), minRTP, maxRTP)
	}
	f.RTP = b
	return nil
}

// length reads a frame's 2-byte length.
func (m *MJRReader) length() (int, error) {
	b, err := m.read(2)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint16(b)), nil
}

// read reads n bytes (at most the buffer's) into the buffer: io.EOF if the file ended before
// them, io.ErrUnexpectedEOF if it ended among them.
func (m *MJRReader) read(n int) ([]byte, error) {
	b := m.buf[:n]
	k, err := io.ReadFull(m.r, b)
	m.offset += int64(k)
	return b, err
}

// truncated describes a read error inside part of the file.
func (m *MJRReader) truncated(part string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("record: %s cut short at offset %d: %w", part, m.offset, err)
}
