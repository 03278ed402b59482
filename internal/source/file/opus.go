package file

import (
	"errors"
	"fmt"
	"io"

	"github.com/pion/webrtc/v4/pkg/media/oggreader"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/source"
)

// maxGranuleGap is the longest silence between two pages the granule positions may announce
// (Opus in Ogg may leave gaps, RFC 7845 §4); a longer jump is a broken file, which would
// otherwise hold playback for as long.
const maxGranuleGap = 10 * 48000

// oggOpus reads an Ogg/Opus file (RFC 7845): the Opus packets of its first Opus stream, each at
// its position in 48 kHz samples. Positions follow the packets' own durations (their table of
// contents) and jump forward where the pages' granule positions leave a gap.
type oggOpus struct {
	f        io.ReadSeekCloser
	serial   uint32
	channels int
	pk       oggPackets
	fr       frame
}

func newOggOpus(f io.ReadSeekCloser) (*oggOpus, error) {
	d := &oggOpus{f: f}
	if err := d.rewind(); err != nil {
		return nil, err
	}
	// The first audio page: a file with headers only, or whose first packet is not Opus, fails
	// here rather than when it is played.
	pkts, _, err := d.pk.nextPage()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("no audio after the Opus headers")
	}
	if err != nil {
		return nil, err
	}
	if media.OpusSamples(pkts[0]) == 0 {
		return nil, errors.New("the first audio packet is not an Opus packet")
	}
	return d, nil
}

// rewind goes back to the start of the file and reads the headers up to the first audio page.
func (d *oggOpus) rewind() error {
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	d.pk.reset(d.f, 0)
	// The identification header is alone on the first page of its stream (beginning of stream).
	for {
		pg, err := d.pk.rd.next()
		if err != nil || pg.flags&oggBOS == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				err = errors.New("no Opus stream")
			}
			return fmt.Errorf("not an Ogg/Opus file: %w", err)
		}
		if len(pg.body) < 8 || string(pg.body[:8]) != "OpusHead" {
			continue // another codec's stream
		}
		h, err := oggreader.ParseOpusHead(pg.body)
		if err != nil {
			return fmt.Errorf("malformed OpusHead: %w", err)
		}
		if h.Version>>4 != 0 {
			return fmt.Errorf("unsupported Ogg/Opus version %d", h.Version)
		}
		if h.Channels == 0 || h.Channels > 2 {
			return fmt.Errorf("%d channels: only mono and stereo Opus files can be streamed", h.Channels)
		}
		d.serial, d.channels = pg.serial, int(h.Channels)
		break
	}
	d.pk.serial = d.serial
	// The comment header, possibly over several pages, is the stream's next packet.
	pkts, _, err := d.pk.nextPage()
	if err != nil {
		return fmt.Errorf("not an Ogg/Opus file: no comment header: %w", err)
	}
	if len(pkts) != 1 || len(pkts[0]) < 8 || string(pkts[0][:8]) != "OpusTags" {
		return errors.New("malformed Ogg/Opus file: the comment header is not alone on its pages")
	}
	return nil
}

func (d *oggOpus) tracks() []trackInfo {
	fmtp := "minptime=10;useinbandfec=1"
	if d.channels == 2 {
		fmtp += ";stereo=1;sprop-stereo=1"
	}
	return []trackInfo{{kind: source.Audio, codec: media.CodecOpus, pt: ptOpus, fmtp: fmtp}}
}

func (d *oggOpus) play(emit func(*frame) bool) error {
	if err := d.rewind(); err != nil {
		return err
	}
	var pos int64 // where the next packet starts, in samples from the first
	origin := int64(-1)
	for {
		pkts, granule, err := d.pk.nextPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var samples int64
		for _, p := range pkts {
			samples += int64(media.OpusSamples(p))
		}
		if granule >= 0 {
			pageStart := granule - samples // granule: where the page's last packet ends
			if origin < 0 {
				origin = pageStart
			}
			if gap := pageStart - origin - pos; gap > maxGranuleGap {
				return fmt.Errorf("the granule position jumps %d s ahead", gap/48000)
			} else if gap > 0 {
				pos += gap
			}
		}
		for _, p := range pkts {
			n := int64(media.OpusSamples(p))
			if n == 0 {
				continue // not an Opus packet: nothing a decoder could play
			}
			d.fr = frame{ts: pos, dur: n, data: p}
			if !emit(&d.fr) {
				return errStopped
			}
			pos += n
		}
	}
}

func (d *oggOpus) close() error { return d.f.Close() }
