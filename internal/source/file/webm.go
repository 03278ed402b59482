package file

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/at-wat/ebml-go"
	"github.com/at-wat/ebml-go/webm"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/source"
)

// maxElement bounds one EBML element the container library reads into memory (a 4K keyframe is
// a few megabytes): a crafted size field cannot make it allocate more.
const maxElement = 16 << 20

// matroska reads WebM and Matroska files with github.com/at-wat/ebml-go: the header once at Open
// (tracks, timestamp scale), then the clusters' blocks in file order on every pass, delivered by
// the library's element hooks on the playback goroutine itself.
type matroska struct {
	f      io.ReadSeekCloser
	br     *bufio.Reader
	scale  int64          // nanoseconds per block timestamp tick
	index  map[uint64]int // Matroska track number -> track index
	infos  []trackInfo
	clocks []int64
	last   []int64 // each track's previous frame, in its clock (-1: none yet)
	gap    []int64 // each track's previous frame interval (a video frame's duration)
	fr     frame
}

// matroskaHeader is what Open reads: the document type, the segment's info and its tracks.
type matroskaHeader struct {
	Header  webm.EBMLHeader `ebml:"EBML"`
	Segment struct {
		Info   struct{ TimecodeScale uint64 }
		Tracks webm.Tracks `ebml:"Tracks,stop"`
	}
}

// matroskaBody is where a pass's clusters are decoded, one element at a time: fields are
// overwritten, nothing accumulates.
type matroskaBody struct {
	Segment struct {
		Cluster struct {
			Timecode    uint64
			SimpleBlock ebml.Block
			BlockGroup  struct{ Block ebml.Block }
		}
	}
}

func newWebM(f io.ReadSeekCloser) (*matroska, error) {
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || !bytes.Equal(magic[:], []byte{0x1a, 0x45, 0xdf, 0xa3}) {
		return nil, errors.New("not a WebM/Matroska file (no EBML header)")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var h matroskaHeader
	err := ebml.Unmarshal(bufio.NewReader(f), &h, ebml.WithMaxLeafElementSize(maxElement))
	if err != nil && !errors.Is(err, ebml.ErrReadStopped) {
		return nil, fmt.Errorf("malformed WebM/Matroska file: %w", err)
	}
	if dt := h.Header.DocType; dt != "webm" && dt != "matroska" {
		return nil, fmt.Errorf("not a WebM/Matroska file (document type %q)", dt)
	}
	if err == nil {
		return nil, errors.New("no tracks in the WebM/Matroska file")
	}
	d := &matroska{f: f, br: bufio.NewReaderSize(f, 64<<10), scale: 1_000_000, index: map[uint64]int{}}
	if s := h.Segment.Info.TimecodeScale; s > 0 && s <= 1_000_000_000 {
		d.scale = int64(s)
	}
	if err := d.addTracks(h.Segment.Tracks.TrackEntry); err != nil {
		return nil, err
	}
	return d, nil
}

// addTracks keeps the audio and video tracks; one of a codec strata cannot send is an error
// (playing the rest would silently drop it).
func (d *matroska) addTracks(entries []webm.TrackEntry) error {
	for _, e := range entries {
		var ti trackInfo
		switch e.CodecID {
		case "V_VP8":
			ti = trackInfo{kind: source.Video, codec: media.CodecVP8, pt: ptVP8}
		case "V_VP9":
			ti = trackInfo{kind: source.Video, codec: media.CodecVP9, pt: ptVP9}
		case "A_OPUS":
			ch := uint64(2)
			if e.Audio != nil {
				ch = e.Audio.Channels
			}
			if ch > 2 {
				return fmt.Errorf("track %d: %d-channel Opus: only mono and stereo can be streamed", e.TrackNumber, ch)
			}
			ti = (&oggOpus{channels: int(ch)}).tracks()[0]
		default:
			if e.TrackType != 1 && e.TrackType != 2 { // not video or audio: subtitles and such
				continue
			}
			return fmt.Errorf("track %d: codec %s is not supported (VP8, VP9 and Opus are)", e.TrackNumber, e.CodecID)
		}
		if _, dup := d.index[e.TrackNumber]; dup {
			return fmt.Errorf("track number %d used twice", e.TrackNumber)
		}
		ti.label = e.Name
		d.index[e.TrackNumber] = len(d.infos)
		d.infos = append(d.infos, ti)
		d.clocks = append(d.clocks, int64(ti.codec.ClockRate()))
	}
	if len(d.infos) == 0 {
		return errors.New("no audio or video track in the WebM/Matroska file")
	}
	d.last, d.gap = make([]int64, len(d.infos)), make([]int64, len(d.infos))
	return nil
}

func (d *matroska) tracks() []trackInfo { return d.infos }

// stopReader ends the library's decoding once emit has asked to stop: the hook that saw it
// cannot return an error, but the next read can.
type stopReader struct {
	r       io.Reader
	stopped bool
}

func (s *stopReader) Read(p []byte) (int, error) {
	if s.stopped {
		return 0, errStopped
	}
	return s.r.Read(p)
}

func (d *matroska) play(emit func(*frame) bool) error {
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	d.br.Reset(d.f)
	for i := range d.last {
		d.last[i], d.gap[i] = -1, 0
	}
	sr := &stopReader{r: d.br}
	var body matroskaBody
	var bad error
	hook := func(e *ebml.Element) {
		if sr.stopped || bad != nil || (e.Name != "SimpleBlock" && e.Name != "Block") {
			return
		}
		b, ok := e.Value.(ebml.Block)
		if !ok {
			return
		}
		tc := int64(body.Segment.Cluster.Timecode) + int64(b.Timecode)
		if bad = d.block(&b, tc, emit); bad != nil {
			sr.stopped = true
		}
	}
	err := ebml.Unmarshal(sr, &body, ebml.WithElementReadHooks(hook), ebml.WithMaxLeafElementSize(maxElement))
	switch {
	case bad != nil:
		return bad
	case err != nil:
		return fmt.Errorf("malformed WebM/Matroska file: %w", err)
	}
	return nil
}

// block emits the frames of one block at tc (in the segment's timestamp ticks).
func (d *matroska) block(b *ebml.Block, tc int64, emit func(*frame) bool) error {
	i, ok := d.index[b.TrackNumber]
	if !ok {
		return nil // a track not played
	}
	if tc < 0 || tc > (1<<62)/d.scale {
		return fmt.Errorf("block timestamp %d out of range", tc)
	}
	clock := d.clocks[i]
	ts := tc * d.scale * clock / 1_000_000_000
	audio := d.infos[i].kind == source.Audio
	for _, data := range b.Data {
		if len(data) == 0 {
			continue
		}
		d.fr = frame{track: i, ts: ts, data: data}
		if audio {
			d.fr.dur = int64(media.OpusSamples(data))
			ts += d.fr.dur // laced frames follow each other
		} else {
			if d.last[i] >= 0 && ts > d.last[i] {
				d.gap[i] = ts - d.last[i]
			}
			d.last[i], d.fr.dur = ts, d.gap[i]
		}
		if !emit(&d.fr) {
			return errStopped
		}
	}
	return nil
}

func (d *matroska) close() error { return d.f.Close() }
