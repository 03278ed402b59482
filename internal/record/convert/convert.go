// Package convert turns .mjr recordings into files ordinary players read, as Janus's janus-pp-rec
// does: the recordings of one participant (audio, video, or both) become one WebM, Ogg/Opus or
// MP4 file, chosen by the output's extension. The packets go through the same pipeline as the live
// recorder's (package playable): put back in order by sequence number, depacketized, video waiting
// for keyframes after gaps, audio gaps filled with silence, audio and video placed on one timeline
// by when their first packets arrived. Nothing is transcoded.
package convert

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/record/playable"
)

// Stats says what a conversion did.
type Stats struct {
	playable.Stats
	// Problems are the recordings that ended early: cut inside a packet (a crash), or holding
	// something that is not a frame; what came before was converted.
	Problems []string
}

// input is one recording being read, with its next frame.
type input struct {
	path string
	r    *record.MJRReader
	base time.Duration // when its first packet arrived (µs since the epoch, as a duration)
	next record.Frame
	done bool
}

// File converts the recordings ins (the tracks of one participant) into the file out, whose
// extension says the format: .webm or .mkv, .opus or .ogg, .mp4. A recording that holds no
// packets, is not audio or video, or whose codec the format does not hold is refused before out is
// created; an error met while converting leaves out with what was converted before it.
func File(out string, ins ...string) (Stats, error) {
	if len(ins) == 0 {
		return Stats{}, errors.New("convert: no recording to convert")
	}
	if _, err := playable.FormatOf(out); err != nil {
		return Stats{}, err
	}
	inputs := make([]*input, 0, len(ins))
	defer func() {
		for _, in := range inputs {
			in.r.Close()
		}
	}()
	tracks := make([]playable.Track, 0, len(ins))
	for _, path := range ins {
		in, track, err := open(path)
		if err != nil {
			return Stats{}, err
		}
		inputs = append(inputs, in)
		tracks = append(tracks, track)
	}
	w, err := playable.New(out, tracks...)
	if err != nil {
		return Stats{}, err
	}
	return stream(w, inputs)
}

// open opens a recording and says what track it is.
func open(path string) (*input, playable.Track, error) {
	r, err := record.OpenMJR(path)
	if err != nil {
		return nil, playable.Track{}, err
	}
	info := r.Info()
	c := media.CodecByName(info.Codec)
	switch {
	case info.Type == "d":
		err = fmt.Errorf("convert: %s is a data recording, which no media file holds", path)
	case c == media.CodecUnknown:
		err = fmt.Errorf("convert: %s: unknown codec %q", path, info.Codec)
	case info.E2EE:
		err = fmt.Errorf("convert: %s is end-to-end encrypted: its frames cannot be read", path)
	case info.OpusRED > 0:
		err = fmt.Errorf("convert: %s carries Opus with redundancy (RED), which is not converted yet", path)
	}
	if err != nil {
		r.Close()
		return nil, playable.Track{}, err
	}
	in := &input{path: path, r: r, base: time.Duration(info.FirstPacket.UnixNano())}
	return in, playable.Track{Codec: c, Fmtp: info.Fmtp}, nil
}

// stream feeds the recordings' packets to w in the order they arrived (track i is inputs[i]) and
// closes w.
func stream(w *playable.Writer, inputs []*input) (Stats, error) {
	var problems []string
	for _, in := range inputs {
		in.advance(&problems)
	}
	for {
		i := earliest(inputs)
		if i < 0 {
			break
		}
		in := inputs[i]
		w.Packet(i, in.next.RTP, in.base+in.next.At)
		in.advance(&problems)
	}
	st, err := w.Close()
	return Stats{Stats: st, Problems: problems}, err
}

// advance reads the input's next frame; an input that ends early is noted in problems.
func (in *input) advance(problems *[]string) {
	if in.done {
		return
	}
	f, err := in.r.Next()
	switch {
	case err == io.EOF:
		in.done = true
	case err != nil:
		in.done = true
		*problems = append(*problems, fmt.Sprintf("%s: %v; converted what came before", in.path, err))
	default:
		in.next = f
	}
}

// earliest is the input whose next frame arrived first, -1 when all ended.
func earliest(inputs []*input) int {
	best := -1
	for i, in := range inputs {
		if !in.done && (best < 0 || in.base+in.next.At < inputs[best].base+inputs[best].next.At) {
			best = i
		}
	}
	return best
}

// Summary describes a conversion in a few lines, for people.
func (st Stats) Summary(out string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, %.3f s\n", out, st.Format, st.Duration.Seconds())
	for _, t := range st.Tracks {
		fmt.Fprintf(&b, "  %s: starts at %.3f s, %.3f s, %d packets, %d frames, %d dropped, %d gaps",
			t.Codec, t.Start.Seconds(), t.Duration.Seconds(), t.Packets, t.Frames, t.Dropped, t.Gaps)
		if t.Codec.IsVideo() {
			fmt.Fprintf(&b, ", %d keyframe waits (%d frames skipped)", t.KeyframeWaits, t.Skipped)
		} else {
			fmt.Fprintf(&b, ", %d silence frames", t.Silence)
		}
		b.WriteByte('\n')
	}
	if st.LeftOut > 0 {
		fmt.Fprintf(&b, "  %d video track(s) left out: no keyframe\n", st.LeftOut)
	}
	for _, p := range st.Problems {
		fmt.Fprintf(&b, "  warning: %s\n", p)
	}
	return b.String()
}
