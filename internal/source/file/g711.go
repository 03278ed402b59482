package file

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/source"
)

// g711Frame is one 20 ms frame of 8 kHz G.711: what Janus reads from a raw file per packet.
const g711Frame = 160

// sniffLen is how much of a file the content checks look at.
const sniffLen = 4096

// rawG711 reads Janus's raw A-law/µ-law files: headerless 8 kHz samples, one byte each, sent 160
// at a time. A last partial frame is not sent (Janus drops it too).
type rawG711 struct {
	f     io.ReadSeekCloser
	codec media.Codec
	br    *bufio.Reader
	buf   [g711Frame]byte
	fr    frame
}

func newRawG711(f io.ReadSeekCloser, size int64, codec media.Codec) (*rawG711, error) {
	if size < g711Frame {
		return nil, fmt.Errorf("%d bytes: shorter than one 20 ms frame of raw %s (160 bytes)", size, codec)
	}
	head := make([]byte, min(size, sniffLen))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, err
	}
	if err := checkRaw(head); err != nil {
		return nil, fmt.Errorf("not a raw %s file: %w", codec, err)
	}
	return &rawG711{f: f, codec: codec, br: bufio.NewReaderSize(f, 16*g711Frame)}, nil
}

// checkRaw rejects what is recognisably something else: a container (whose header would play as
// noise) or text. Raw G.711 has no header, so anything else passes; its samples' sign bit is the
// top bit, so audio has bytes above 0x7f where text has none.
func checkRaw(head []byte) error {
	for _, m := range []struct {
		magic []byte
		off   int
		name  string
	}{
		{[]byte("OggS"), 0, "an Ogg file"},
		{[]byte{0x1a, 0x45, 0xdf, 0xa3}, 0, "a WebM/Matroska file"},
		{[]byte("RIFF"), 0, "a RIFF (WAVE) file"},
		{[]byte("ID3"), 0, "an MP3 file"},
		{[]byte("fLaC"), 0, "a FLAC file"},
		{[]byte("ftyp"), 4, "an MP4 file"},
		{[]byte("MJR0"), 0, "a Janus recording (.mjr)"},
	} {
		if len(head) >= m.off+len(m.magic) && bytes.Equal(head[m.off:m.off+len(m.magic)], m.magic) {
			return errors.New("it is " + m.name)
		}
	}
	for _, b := range head {
		if b >= 0x80 || (b < 0x20 && b != '\n' && b != '\r' && b != '\t') {
			return nil
		}
	}
	return errors.New("it is text")
}

func (r *rawG711) tracks() []trackInfo {
	pt := uint8(0)
	if r.codec == media.CodecPCMA {
		pt = 8
	}
	return []trackInfo{{kind: source.Audio, codec: r.codec, pt: pt}}
}

func (r *rawG711) play(emit func(*frame) bool) error {
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r.br.Reset(r.f)
	r.fr = frame{dur: g711Frame, data: r.buf[:]}
	for {
		if _, err := io.ReadFull(r.br, r.buf[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
		if !emit(&r.fr) {
			return errStopped
		}
		r.fr.ts += g711Frame
	}
}

func (r *rawG711) close() error { return r.f.Close() }
