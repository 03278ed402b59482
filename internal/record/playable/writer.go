package playable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

// MaxPending bounds the frames held before the file's header can be written (while video waits for
// its first keyframe): about 30 s of audio. Past it, the header is written without the video that
// has not sent a keyframe, and that video is left out.
const MaxPending = 1500

// MaxLag is how long a track's frames wait for the other tracks' frames to be interleaved with
// them: a track silent for longer (a muted camera) does not hold the others back.
const MaxLag = 2 * time.Second

// Track describes one track of a Writer.
type Track struct {
	Codec media.Codec
	// Fmtp is the codec's fmtp line ("stereo=1" makes Opus stereo).
	Fmtp string
}

// Stats says what a Writer did.
type Stats struct {
	Format Format
	Tracks []TrackStats
	// LeftOut are tracks the file does not have: video that sent no keyframe in time.
	LeftOut int
	// Duration is the file's.
	Duration time.Duration
}

// muxer writes one container.
type muxer interface {
	// start writes the header, for the tracks given (their parameters are known).
	start(tracks []*track) error
	// write writes a frame of track i (an index into the tracks start was given).
	write(i int, f frame) error
	// close ends the file, which lasts until end.
	close(end time.Duration) error
}

// Writer writes the tracks of one participant into one file. Its methods are not safe for
// concurrent use: one goroutine feeds it (the live recorder's writer, or a conversion).
type Writer struct {
	path   string
	format Format
	file   *os.File
	tracks []*track
	in     []*track // the tracks in the file, once started
	mux    muxer

	started, origined bool
	origin            time.Duration // the arrival of the first packet: the file's zero
	now               time.Duration // the latest arrival, on the file's clock
	pending           int
	leftOut           int
	err               error
	out               func(*track, frame)
}

// New creates the file at path for the tracks, in the format its extension names. A track whose
// codec the format cannot hold is an error.
func New(path string, tracks ...Track) (*Writer, error) {
	f, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{path: path, format: f}
	w.out = w.queue
	for _, t := range tracks {
		if _, err := w.AddTrack(t); err != nil {
			return nil, err
		}
	}
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("playable: %w", err)
	}
	w.file = file
	return w, nil
}

// AddTrack adds a track, before the file's header is written; it returns the track's index.
func (w *Writer) AddTrack(t Track) (int, error) {
	if w.started {
		return 0, errors.New("playable: the file has started: no track can be added")
	}
	if err := w.format.fits(t.Codec, w.tracks); err != nil {
		return 0, fmt.Errorf("playable: %s: %w", filepath.Base(w.path), err)
	}
	w.tracks = append(w.tracks, newTrack(t.Codec, t.Fmtp))
	return len(w.tracks) - 1, nil
}

// Err is the error that stopped the file (a full disk), nil while it is written.
func (w *Writer) Err() error { return w.err }

// Path is the file's.
func (w *Writer) Path() string { return w.path }

// Packet takes a packet of track i that arrived at at (any clock, the same for all tracks).
func (w *Writer) Packet(i int, pkt []byte, at time.Duration) {
	if i < 0 || i >= len(w.tracks) || w.err != nil {
		return
	}
	if !w.origined {
		w.origined, w.origin = true, at
	}
	at = max(at-w.origin, 0)
	w.now = max(w.now, at)
	w.tracks[i].packet(pkt, at, w.now, w.out)
	w.drain(false)
}

// Resync says track i's stream does not go on where it stopped (muted, then resumed): its next
// packet starts a new anchor of its clock, and video waits for a keyframe.
func (w *Writer) Resync(i int) {
	if i >= 0 && i < len(w.tracks) && w.tracks[i].ssrcKnown {
		w.tracks[i].restart(w.now, w.out)
		w.drain(false)
	}
}

// queue takes a track's frame for interleaving.
func (w *Writer) queue(t *track, f frame) {
	if t.excluded() {
		return
	}
	t.queue = append(t.queue, f)
	t.seen = true
	if !w.started {
		w.pending++
	}
}

// Close writes what is held and ends the file.
func (w *Writer) Close() (Stats, error) {
	for _, t := range w.tracks {
		t.close(w.now, w.out)
	}
	if w.file != nil {
		w.drain(true)
		var end time.Duration
		for _, t := range w.in {
			end = max(end, t.end())
		}
		if w.mux != nil {
			if err := w.mux.close(end); err != nil && w.err == nil {
				w.err = fmt.Errorf("playable: %s: %w", w.path, err)
			}
		} else if err := w.file.Close(); err != nil && w.err == nil {
			w.err = err
		}
		w.file = nil
	}
	return w.stats(), w.err
}

func (w *Writer) stats() Stats {
	st := Stats{Format: w.format, LeftOut: w.leftOut}
	for _, t := range w.tracks {
		ts := t.st
		if t.wrote {
			ts.Duration = t.end() - ts.Start
			st.Duration = max(st.Duration, t.end())
		}
		st.Tracks = append(st.Tracks, ts)
	}
	return st
}

// drain writes the header when it can, then the frames that are due, in time order.
func (w *Writer) drain(closing bool) {
	if w.err != nil {
		return
	}
	if !w.started && !w.tryStart(closing) {
		return
	}
	for {
		i := w.next(closing)
		if i < 0 {
			return
		}
		t := w.in[i]
		f := t.queue[0]
		t.queue = t.queue[1:]
		if err := w.mux.write(i, f); err != nil {
			w.err = fmt.Errorf("playable: %s: %w", w.path, err)
			return
		}
	}
}

// tryStart writes the header once every video track has a keyframe waiting, or when too much waits
// (or the file closes) without it: then the video without a keyframe is left out. Audio needs
// nothing from its frames, so an audio track is in the file whether its frames came yet or not.
func (w *Writer) tryStart(closing bool) bool {
	ready, any := true, false
	for _, t := range w.tracks {
		any = any || t.seen
		if t.codec.IsVideo() && !t.seen {
			ready = false
		}
	}
	if !any || !ready && !closing && w.pending <= MaxPending {
		return false
	}
	for _, t := range w.tracks {
		if t.seen || !t.codec.IsVideo() {
			w.in = append(w.in, t)
		} else {
			t.leftOut = true
			w.leftOut++
		}
	}
	w.started = true
	w.mux = w.format.muxer(w.file)
	if err := w.mux.start(w.in); err != nil {
		w.err = fmt.Errorf("playable: %s: %w", w.path, err)
		return false
	}
	return true
}

// next is the track whose queued frame goes next, -1 when none is due: the earliest frame, once
// every track has one queued, or once it is MaxLag old.
func (w *Writer) next(closing bool) int {
	best, all := -1, true
	for i, t := range w.in {
		if len(t.queue) == 0 {
			all = false
			continue
		}
		if best < 0 || t.queue[0].pts < w.in[best].queue[0].pts {
			best = i
		}
	}
	if best < 0 || all || closing || w.now-w.in[best].queue[0].pts > MaxLag {
		return best
	}
	return -1
}

// Format is a container.
type Format int

// The containers.
const (
	WebM Format = iota
	Ogg
	MP4
)

func (f Format) String() string { return [...]string{"webm", "ogg", "mp4"}[f] }

// FormatOf is the format a file's extension names: .webm and .mkv, .ogg and .opus, .mp4.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".webm", ".mkv":
		return WebM, nil
	case ".ogg", ".opus":
		return Ogg, nil
	case ".mp4", ".m4a":
		return MP4, nil
	}
	return 0, fmt.Errorf("playable: %s: unknown format (known: .webm, .mkv, .ogg, .opus, .mp4)", path)
}

// fits says whether the format holds codec c beside the tracks it has.
func (f Format) fits(c media.Codec, have []*track) error {
	var ok bool
	switch f {
	case WebM:
		ok = c == media.CodecVP8 || c == media.CodecVP9 || c == media.CodecAV1 || c == media.CodecOpus
	case Ogg:
		ok = c == media.CodecOpus
		if ok && len(have) > 0 {
			return errors.New("an .ogg file holds one Opus track")
		}
	case MP4:
		ok = c == media.CodecH264 || c == media.CodecVP9 || c == media.CodecAV1 || c == media.CodecOpus
	}
	if !ok {
		return fmt.Errorf("%s does not fit in %s (it holds %s)", c, f, f.holds())
	}
	return nil
}

func (f Format) holds() string {
	return [...]string{"VP8, VP9, AV1, Opus", "Opus", "H.264, VP9, AV1, Opus"}[f]
}

// Ext is the format's usual extension.
func (f Format) Ext() string { return [...]string{".webm", ".opus", ".mp4"}[f] }

// FormatByName is the format named "webm", "ogg" or "mp4" (as the configuration names them).
func FormatByName(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "webm", "mkv":
		return WebM, nil
	case "ogg", "opus":
		return Ogg, nil
	case "mp4":
		return MP4, nil
	}
	return 0, fmt.Errorf("playable: unknown format %q (known: webm, ogg, mp4)", name)
}

// Fits says whether format f holds codec c (for the tracks of one participant to be checked before
// a file is made).
func (f Format) Fits(c media.Codec) bool { return f.fits(c, nil) == nil }

// muxer makes the format's muxer, writing to file.
func (f Format) muxer(file *os.File) muxer {
	switch f {
	case Ogg:
		return &oggMuxer{f: file}
	case MP4:
		return &mp4Muxer{f: file}
	}
	return &webmMuxer{f: file}
}

// CheckFormat checks the configuration's choice of a container (name) for participants whose
// video codec is key ("vp8", "vp9", "av1", "h264"), or for participants without video ("audio").
func CheckFormat(key, name string) error {
	f, err := FormatByName(name)
	if err != nil {
		return err
	}
	c := media.CodecOpus
	if key != "audio" {
		if c = media.CodecByName(key); c == media.CodecUnknown || !c.IsVideo() {
			return fmt.Errorf("playable: %q is not a video codec (vp8, vp9, av1, h264) or audio", key)
		}
	}
	if !f.Fits(c) {
		return fmt.Errorf("playable: %s does not hold %s", f, c)
	}
	return nil
}
