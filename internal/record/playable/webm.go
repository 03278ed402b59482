package playable

import (
	"encoding/binary"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/at-wat/ebml-go/mkvcore"
	"github.com/at-wat/ebml-go/webm"

	"github.com/strata-rtc/strata/internal/media"
)

// cuesSize is the room kept after the header for the index (Cues) written at the end, which lets
// players seek: a cue per cluster (a cluster per keyframe, at most 5 s), about ten thousand; when a
// long recording has more, ebml-go keeps every other one until they fit.
const cuesSize = 256 << 10

// clusterMax is the longest cluster (ms): a block's time is a 16-bit offset in its cluster.
const clusterMax = 5000

// webmMuxer writes WebM through ebml-go, which ends the file with its duration and index.
type webmMuxer struct {
	f  *os.File
	ws []webm.BlockWriteCloser
	// out is what ebml-go writes to: it writes on a goroutine of its own, which ends at its first
	// error and leaves every later Write and Close blocked, so out keeps the error (a full disk)
	// for the muxer to report, and ebml-go never sees one.
	out errorKeeper
}

// errorKeeper is a file that keeps its first error and drops what is written after it.
type errorKeeper struct {
	f   *os.File
	mu  sync.Mutex
	err error
}

func (e *errorKeeper) Write(b []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		_, e.err = e.f.Write(b)
	}
	return len(b), nil
}

func (e *errorKeeper) WriteAt(b []byte, off int64) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		_, e.err = e.f.WriteAt(b, off)
	}
	return len(b), nil
}

func (e *errorKeeper) Close() error {
	err := e.f.Close()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
	return nil
}

func (e *errorKeeper) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

func (m *webmMuxer) start(tracks []*track) error {
	entries := make([]webm.TrackEntry, len(tracks))
	main := uint64(0)
	for i, t := range tracks {
		n := uint64(i + 1)
		e := webm.TrackEntry{Name: t.codec.String(), TrackNumber: n, TrackUID: n, CodecID: webmCodecID(t.codec)}
		if t.codec.IsVideo() {
			e.TrackType = 1
			e.Video = &webm.Video{PixelWidth: uint64(t.video.width), PixelHeight: uint64(t.video.height)}
			if t.codec == media.CodecAV1 {
				e.CodecPrivate = av1C(&t.video)
			}
			if main == 0 {
				main = n
			}
		} else {
			e.TrackType = 2
			ch := opusChannels(t.fmtp)
			e.Audio = &webm.Audio{SamplingFrequency: opusRate, Channels: uint64(ch)}
			e.CodecPrivate = opusHead(ch)
			e.SeekPreRoll = uint64(80 * time.Millisecond)
		}
		entries[i] = e
	}
	// A segment info of this file's own: ebml-go writes the duration into the one it is given, and
	// its default is shared by every writer.
	info := &webm.Info{TimecodeScale: 1000000, MuxingApp: "strata", WritingApp: "strata"}
	opts := []mkvcore.BlockWriterOption{mkvcore.WithSeekHead(true), mkvcore.WithCues(cuesSize),
		mkvcore.WithBlockInterceptor(nil), mkvcore.WithSegmentInfo(info)}
	if main != 0 {
		// A cluster starts at each keyframe, so that seeking lands on one.
		opts = append(opts, mkvcore.WithMinMaxClusterDuration(main, 0, clusterMax))
	}
	m.out.f = m.f
	ws, err := webm.NewSimpleBlockWriter(&m.out, entries, opts...)
	m.ws = ws
	return err
}

func (m *webmMuxer) write(i int, f frame) error {
	if err := m.out.failed(); err != nil {
		return err
	}
	_, err := m.ws[i].Write(f.key, f.pts.Milliseconds(), f.data)
	return err
}

func (m *webmMuxer) close(time.Duration) error {
	var err error
	for _, w := range m.ws {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = m.out.failed()
	}
	return err
}

func webmCodecID(c media.Codec) string {
	switch c {
	case media.CodecVP8:
		return "V_VP8"
	case media.CodecVP9:
		return "V_VP9"
	case media.CodecAV1:
		return "V_AV1"
	}
	return "A_OPUS"
}

// opusChannels is 2 when the fmtp says the sender sends stereo.
func opusChannels(fmtp string) int {
	if strings.Contains(strings.ReplaceAll(fmtp, " ", ""), "stereo=1") {
		return 2
	}
	return 1
}

// opusHead is the Opus identification header (RFC 7845 §5.1): version 1, the channels, no
// pre-skip (the packets are as sent: nothing to trim, so the tracks stay in sync), 48 kHz.
func opusHead(channels int) []byte {
	h := make([]byte, 19)
	copy(h, "OpusHead")
	h[8], h[9] = 1, byte(channels)
	binary.LittleEndian.PutUint32(h[12:], opusRate)
	return h
}

// av1C is the AV1 codec configuration record (AV1 ISOBMFF binding §2.3), WebM's CodecPrivate.
func av1C(v *videoParams) []byte {
	s := &v.av1
	c := &s.ColorConfig
	b := []byte{0x81, s.SeqProfile<<5 | s.SeqLevelIdx[0]&0x1f,
		bit(s.SeqTier[0])<<7 | bit(c.HighBitDepth)<<6 | bit(c.TwelveBit)<<5 | bit(c.MonoChrome)<<4 |
			bit(c.SubsamplingX)<<3 | bit(c.SubsamplingY)<<2 | uint8(c.ChromaSamplePosition)&3, 0}
	obu := append([]byte{v.seq[0] | 0x02}, v.seq[1:1+hdrExt(v.seq[0])]...)
	obu = appendLeb128(obu, uint64(len(v.seq)-1-hdrExt(v.seq[0])))
	return append(append(b, obu...), v.seq[1+hdrExt(v.seq[0]):]...)
}

func hdrExt(h byte) int {
	if h&0x04 != 0 {
		return 1
	}
	return 0
}

func appendLeb128(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func bit(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
