package audio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hraban/opus"
)

// fileDecoder reads an Ogg/Opus file with libopusfile (hraban/opus's Stream), which parses the Ogg
// container, applies the pre-skip and end trimming and decodes at 48 kHz, and converts it to the
// room's format one frame at a time. It belongs to one goroutine at a time: OpenFile's, then the
// reader's.
type fileDecoder struct {
	file   *os.File
	stream *opus.Stream
	ch     int // the file's channels
	loop   bool
	eof    bool    // the stream has ended for good
	played int64   // samples per channel decoded since the last (re)start
	stage  []int16 // one 20 ms frame at 48 kHz in the file's channels
	conv   *toRoom
}

// openFileDecoder opens path and checks it is an Ogg/Opus file of one or two channels.
func openFileDecoder(path string, f Format, loop bool) (*fileDecoder, error) {
	// Checked before opening: opening a FIFO would block until someone writes to it.
	st, err := os.Stat(path)
	if err == nil && !st.Mode().IsRegular() {
		err = errors.New("not a regular file")
	} else if err == nil && st.Size() == 0 {
		err = errors.New("empty file")
	}
	var file *os.File
	if err == nil {
		file, err = os.Open(path)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the caller's message names the path
		}
		return nil, err
	}
	d := &fileDecoder{file: file, loop: loop}
	if err := d.open(f); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// open reads the headers and sets up the conversion for the file's channel count.
func (d *fileDecoder) open(f Format) error {
	var err error
	if d.ch, err = opusHeadChannels(d.file); err != nil {
		return err
	}
	if d.ch > 2 {
		return fmt.Errorf("%d channels: announcements must be mono or stereo", d.ch)
	}
	if err := d.restart(); err != nil {
		return err
	}
	d.stage = make([]int16, OpusClock*FrameMs/1000*d.ch)
	d.conv = newToRoom(d.ch, f)
	return nil
}

// onlyReader hides the file's Close from Stream.Close, which would otherwise close it: the file is
// rewound and read again when looping.
type onlyReader struct{ io.Reader }

// restart (re)opens the Ogg/Opus stream at the start of the file. The binding's Stream cannot
// seek (it opens libopusfile without a seek callback), so looping starts a new one.
func (d *fileDecoder) restart() error {
	if d.stream != nil {
		d.stream.Close()
		d.stream = nil
	}
	if _, err := d.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	st, err := opus.NewStream(onlyReader{d.file})
	if err != nil {
		return err
	}
	d.stream, d.played = st, 0
	return nil
}

// next decodes the next frame into out, in the room's format, padding the file's last frame with
// silence. It returns false, with nothing in out, once the file has ended (looping files end only
// if a whole pass yields no audio).
func (d *fileDecoder) next(out []int16) (bool, error) {
	n := 0
	for n < len(d.stage) && !d.eof {
		m, err := d.stream.Read(d.stage[n:])
		switch {
		case err == nil:
			n += m * d.ch
			d.played += int64(m)
		case err == io.EOF && d.loop && d.played > 0:
			if err := d.restart(); err != nil {
				return false, err
			}
		case err == io.EOF:
			d.eof = true
		case err == opus.ErrStreamHole:
			// Pages are missing: libopusfile reports the gap once and carries on after it.
		default:
			return false, err
		}
	}
	if n == 0 {
		return false, nil
	}
	clear(d.stage[n:])
	d.conv.convert(d.stage, out)
	return true, nil
}

// close releases libopusfile's state and closes the file.
func (d *fileDecoder) close() {
	if d.stream != nil {
		d.stream.Close()
		d.stream = nil
	}
	d.file.Close()
}

// opusHeadChannels returns the channel count in the identification header (RFC 7845 §5.1) of the
// first Opus stream in an Ogg file. The binding does not expose libopusfile's op_channel_count,
// yet op_read returns samples in the stream's channel count, so it must be known. The header is
// alone on its stream's first page (RFC 7845 §3), a beginning-of-stream page, and those all come
// before any other page of the file (RFC 3533 §4), so only they are read here; libopusfile
// validates everything else. A chained file (Ogg/Opus files concatenated) whose later links
// change the channel count plays those links garbled: op_read_stereo would cope, but the binding
// does not expose it.
func opusHeadChannels(r io.Reader) (int, error) {
	notOgg := errors.New("not an Ogg/Opus file")
	var hdr [27]byte // the fixed part of an Ogg page header (RFC 3533 §6)
	var segs [255]byte
	var head [19]byte // OpusHead up to the channel mapping family
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil || string(hdr[:4]) != "OggS" {
			return 0, notOgg
		}
		if hdr[5]&0x02 == 0 { // past the beginning-of-stream pages
			return 0, errors.New("no Opus stream in the Ogg file")
		}
		lacing := segs[:hdr[26]]
		if _, err := io.ReadFull(r, lacing); err != nil {
			return 0, errors.New("truncated Ogg page")
		}
		size := 0
		for _, l := range lacing {
			size += int(l)
		}
		h := head[:min(size, len(head))]
		if _, err := io.ReadFull(r, h); err != nil {
			return 0, errors.New("truncated Ogg page")
		}
		if len(h) == len(head) && string(h[:8]) == "OpusHead" {
			if h[9] == 0 {
				return 0, errors.New("malformed Opus header: zero channels")
			}
			return int(h[9]), nil
		}
		if _, err := io.CopyN(io.Discard, r, int64(size-len(h))); err != nil {
			return 0, errors.New("truncated Ogg page")
		}
	}
}

// toRoom converts 20 ms frames at 48 kHz in the file's channels to the room's format: a stereo
// file is averaged to mono for a mono room, a mono one copied to both sides of a stereo room, and
// each channel decimated to the room's rate.
type toRoom struct {
	inCh, outCh int
	decs        []*decimator // one per channel filtered: min(inCh, outCh)
}

func newToRoom(inCh int, f Format) *toRoom {
	c := &toRoom{inCh: inCh, outCh: f.Channels}
	for range min(inCh, f.Channels) {
		c.decs = append(c.decs, newDecimator(OpusClock/f.Rate, OpusClock*FrameMs/1000))
	}
	return c
}

// convert converts in (one 48 kHz frame) into out (one room frame).
func (c *toRoom) convert(in, out []int16) {
	n := len(in) / c.inCh
	downmix := c.inCh > len(c.decs)
	for ch, dec := range c.decs {
		x := dec.input()
		for k := 0; k < n; k++ {
			if downmix {
				x[k] = (float32(in[2*k]) + float32(in[2*k+1])) / 2
			} else {
				x[k] = float32(in[k*c.inCh+ch])
			}
		}
		dec.run(out, c.outCh, ch)
	}
	if c.outCh > len(c.decs) { // upmix
		for j := 0; j+1 < len(out); j += 2 {
			out[j+1] = out[j]
		}
	}
}
