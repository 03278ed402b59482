package playable

import (
	"os"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4/seekablebuffer"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4/codecs"

	"github.com/strata-rtc/strata/internal/media"
)

// Fragments: a new one starts at a video keyframe once the current one holds fragmentMin, and
// in any case after fragmentMax. A fragment is on disk once written: a crash loses the current
// one only.
const (
	fragmentMin = time.Second
	fragmentMax = 2 * time.Second
)

// mp4Muxer writes fragmented MP4 (an init segment, then moof+mdat fragments) through
// mediacommon's fmp4: written as it goes, with nothing to rewrite at the end.
type mp4Muxer struct {
	f      *os.File
	tracks []*mp4Track
	seq    uint32
	start0 time.Duration // the current fragment's start
	zero   time.Duration // the first frame's time (the interleaving gives the earliest): the file's zero
	open   bool
	buf    seekablebuffer.Buffer
}

// mp4Track holds one track's samples of the current fragment, and its last frame, whose duration
// the next frame gives.
type mp4Track struct {
	codec   media.Codec
	scale   uint32
	samples []*fmp4.Sample
	base    uint64 // the decode time of samples[0]
	last    *fmp4.Sample
	lastAt  uint64 // the decode time of last
	hasLast bool
	lastDur uint32
	started bool
}

func (m *mp4Muxer) start(tracks []*track) error {
	var init fmp4.Init
	for i, t := range tracks {
		mt := &mp4Track{codec: t.codec, scale: uint32(t.clock)}
		m.tracks = append(m.tracks, mt)
		it := &fmp4.InitTrack{ID: i + 1, TimeScale: mt.scale}
		switch t.codec {
		case media.CodecH264:
			it.Codec = &codecs.H264{SPS: t.video.sps, PPS: t.video.pps}
		case media.CodecVP9:
			h := &t.video.vp9
			it.Codec = &codecs.VP9{Width: t.video.width, Height: t.video.height, Profile: h.Profile,
				BitDepth: h.ColorConfig.BitDepth, ChromaSubsampling: vp9Subsampling(h.ColorConfig.SubsamplingX, h.ColorConfig.SubsamplingY),
				ColorRange: h.ColorConfig.ColorRange}
		case media.CodecAV1:
			it.Codec = &codecs.AV1{SequenceHeader: t.video.seq}
		default:
			it.Codec = &codecs.Opus{ChannelCount: opusChannels(t.fmtp)}
		}
		init.Tracks = append(init.Tracks, it)
	}
	m.buf.Reset()
	if err := init.Marshal(&m.buf); err != nil {
		return err
	}
	_, err := m.f.Write(m.buf.Bytes())
	return err
}

// vp9Subsampling is the vpcC chroma subsampling: 1 for 4:2:0, 2 for 4:2:2, 3 for 4:4:4.
func vp9Subsampling(x, y bool) uint8 {
	switch {
	case x && y:
		return 1
	case x:
		return 2
	}
	return 3
}

func (m *mp4Muxer) write(i int, f frame) error {
	if !m.open {
		m.open, m.start0, m.zero = true, f.pts, f.pts
	}
	if f.pts < m.zero {
		return nil // a track later than the interleaving waits for, with frames from before the file's start
	}
	if span := f.pts - m.start0; span >= fragmentMax || span >= fragmentMin && f.key && m.tracks[i].codec.IsVideo() {
		if err := m.flush(); err != nil {
			return err
		}
		m.start0 = f.pts
	}
	t := m.tracks[i]
	at := uint64(f.pts-m.zero) * uint64(t.scale) / uint64(time.Second)
	if !t.started {
		t.started = true
		m.lead(t, at)
	}
	s := &fmp4.Sample{IsNonSyncSample: !f.key}
	switch t.codec {
	case media.CodecH264:
		var au h264.AnnexB
		if err := au.Unmarshal(f.data); err != nil {
			return nil // the keyframe check parsed it: only a corrupt frame gets here
		}
		avcc, err := h264.AVCC(au).Marshal()
		if err != nil {
			return nil
		}
		s.Payload = avcc
	default:
		s.Payload = f.data
	}
	t.push(s, at)
	return nil
}

// lead starts a track that starts after the file's zero at the zero all the same, as every player
// reads it (ffmpeg takes a fragment's start for a track's duration, and no edit list says where a
// track starts in a fragmented file): audio with silence, video with its first frame showing
// until the second one. The timeline after it is unchanged.
func (m *mp4Muxer) lead(t *mp4Track, at uint64) {
	if t.codec.IsVideo() || at < uint64(t.scale)/50 {
		return // the first frame's decode time becomes 0: it lasts until the next one
	}
	for k := uint64(0); k+uint64(t.scale)/50 <= at; k += uint64(t.scale) / 50 {
		t.push(&fmp4.Sample{Payload: opusSilence}, k)
	}
}

// push ends the previous sample at the new one's decode time, and holds the new one; a track's
// first sample starts at 0.
func (t *mp4Track) push(s *fmp4.Sample, at uint64) {
	if !t.hasLast {
		at = 0
	}
	if t.hasLast {
		d := uint32(max(at, t.lastAt) - t.lastAt)
		if d == 0 {
			d = 1
		}
		t.last.Duration, t.lastDur = d, d
		if len(t.samples) == 0 {
			t.base = t.lastAt
		}
		t.samples = append(t.samples, t.last)
		at = t.lastAt + uint64(d)
	}
	t.last, t.lastAt, t.hasLast = s, at, true
}

// flush writes the current fragment.
func (m *mp4Muxer) flush() error {
	part := fmp4.Part{SequenceNumber: m.seq + 1}
	for i, t := range m.tracks {
		if len(t.samples) > 0 {
			part.Tracks = append(part.Tracks, &fmp4.PartTrack{ID: i + 1, BaseTime: t.base, Samples: t.samples})
		}
	}
	if len(part.Tracks) == 0 {
		return nil
	}
	m.seq++
	m.buf.Reset()
	if err := part.Marshal(&m.buf); err != nil {
		return err
	}
	for _, t := range m.tracks {
		t.samples = nil
	}
	_, err := m.f.Write(m.buf.Bytes())
	return err
}

func (m *mp4Muxer) close(time.Duration) error {
	for _, t := range m.tracks {
		if !t.hasLast {
			continue
		}
		t.last.Duration = max(t.lastDur, 1) // as long as the one before it
		if len(t.samples) == 0 {
			t.base = t.lastAt
		}
		t.samples = append(t.samples, t.last)
		t.hasLast = false
	}
	err := m.flush()
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}
