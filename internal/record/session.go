package record

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record/playable"
	"github.com/strata-rtc/strata/internal/sfu"
)

// SessionOptions configure a participant's recording.
type SessionOptions struct {
	// Playable writes, beside the .mjr files, one file of the participant that players read
	// (recording.playable in the configuration).
	Playable bool
	// Formats names the playable file's container ("webm", "mp4", "ogg") by the participant's video
	// codec ("vp8", "vp9", "av1", "h264"), and by "audio" for a participant without video
	// (recording.containers). Codecs it does not name take DefaultFormats'.
	Formats map[string]string
	// Log receives what goes wrong in the background (nil: slog's default).
	Log *slog.Logger
}

// DefaultFormats are the containers the configuration's reference names.
var DefaultFormats = map[string]string{"vp8": "webm", "vp9": "webm", "av1": "webm", "h264": "mp4", "audio": "ogg"}

// SessionStats counts what a participant's recording did.
type SessionStats struct {
	// MJR are the .mjr recordings' counters, in the order of AddTrack.
	MJR []Stats
	// Playable is what the playable file holds (zero without one); Dropped counts the packets
	// the playable file's writer did not keep up with (the disk was slow), or that came for a
	// track the file could not hold.
	Playable playable.Stats
	Dropped  uint64
	// Path is the playable file's, "" when there is none.
	Path string
}

// Session records one participant: a .mjr file per track, always, and when SessionOptions.Playable
// says so, one playable file of all its tracks beside them. AddTrack gives the sfu.Sink of each
// track; Close ends the recording. Like MJR, nothing of it blocks the media path: each track's
// packets are copied into a ring and a goroutine writes the playable file; a slow disk drops and
// counts.
type Session struct {
	dir, base string
	opts      SessionOptions
	log       *slog.Logger

	mu     sync.Mutex
	tracks []*SessionTrack
	kinds  map[string]int
	closed bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
	err  error

	// The writer goroutine's: the playable file, and each track's index in it (-1: not in it).
	w       *playable.Writer
	failed  bool
	dropped atomic.Uint64

	// What Close found, under mu.
	stats playable.Stats
	path  string
}

// SessionTrack is the sfu.Sink of one track of a Session.
type SessionTrack struct {
	s        *Session
	mjr      *MJR
	ring     *ring // nil without a playable file
	codec    media.Codec
	fmtp     string
	index    int // in the playable file; -1 when not (yet) in it
	inflight atomic.Int32
}

// NewSession starts a participant's recording in dir (which must exist): its files are named
// base-audio.mjr, base-video.mjr (base-video-2.mjr for a second video track, ...) and base.webm,
// base.mp4 or base.opus for the playable file.
func NewSession(dir, base string, opts SessionOptions) (*Session, error) {
	if err := checkDir(filepath.Join(dir, base)); err != nil {
		return nil, err
	}
	if opts.Playable {
		for codec, name := range opts.Formats {
			if err := playable.CheckFormat(codec, name); err != nil {
				return nil, fmt.Errorf("record: playable format for %s: %w", codec, err)
			}
		}
	}
	s := &Session{dir: dir, base: base, opts: opts, log: opts.Log, kinds: map[string]int{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if s.log == nil {
		s.log = slog.Default()
	}
	if opts.Playable {
		go s.run()
	} else {
		close(s.done)
	}
	return s, nil
}

// AddTrack records a track of codec (fmtp its fmtp line, opts the .mjr recording's options) and
// returns its sink, to add to the track's sfu.Receiver. Add the tracks before their packets flow:
// the playable file's tracks are those added when its first packet comes.
func (s *Session) AddTrack(codec media.Codec, fmtp string, opts ...Option) (*SessionTrack, error) {
	return s.AddTrackAs("", codec, fmtp, opts...)
}

// AddTrackAs is AddTrack with the .mjr file's name (without ".mjr") chosen by the caller, for
// plugins whose file names Janus fixes per stream (the videoroom's <base>-<kind>-<mindex>); ""
// names it as AddTrack does.
func (s *Session) AddTrackAs(name string, codec media.Codec, fmtp string, opts ...Option) (*SessionTrack, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("record: the session is closed")
	}
	kind := "audio"
	if codec.IsVideo() {
		kind = "video"
	}
	s.kinds[kind]++
	if name == "" {
		name = s.base + "-" + kind
		if n := s.kinds[kind]; n > 1 {
			name += fmt.Sprint("-", n)
		}
	}
	m, err := NewMJR(filepath.Join(s.dir, name+".mjr"), codec, append([]Option{WithFmtp(fmtp)}, opts...)...)
	if err != nil {
		s.kinds[kind]--
		return nil, err
	}
	t := &SessionTrack{s: s, mjr: m, codec: codec, fmtp: fmtp, index: -1}
	if s.opts.Playable {
		t.ring = newRing(int(m.ring.mask+1), s.wake)
	}
	s.tracks = append(s.tracks, t)
	return t, nil
}

// WriteRTP implements sfu.Sink: the packet goes to the .mjr recording and, copied into the track's
// ring, to the playable file. It allocates nothing and never waits.
func (t *SessionTrack) WriteRTP(p *sfu.Packet) {
	t.mjr.WriteRTP(p)
	if t.ring == nil || p.Layer != t.mjr.layer {
		return
	}
	t.inflight.Add(1)
	if !t.mjr.closed.Load() && !t.ring.push(p) {
		t.s.dropped.Add(1)
	}
	t.inflight.Add(-1)
}

// Resync implements sfu.Sink.
func (t *SessionTrack) Resync() {
	t.mjr.Resync()
	if t.ring != nil {
		t.ring.markResync()
	}
}

// MJR is the track's .mjr recording.
func (t *SessionTrack) MJR() *MJR { return t.mjr }

// run is the playable file's writer: it takes the tracks' packets in the order they arrived.
func (s *Session) run() {
	defer close(s.done)
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.wake:
		case <-tick.C:
		case <-s.stop:
			s.drain()
			return
		}
		s.drain()
	}
}

// drain writes what the rings hold, oldest packet first across the tracks.
func (s *Session) drain() {
	s.mu.Lock()
	tracks := s.tracks
	s.mu.Unlock()
	for {
		best, bestAt := -1, time.Duration(0)
		for i, t := range tracks {
			if at, ok := t.ring.peek(); ok && (best < 0 || at < bestAt) {
				best, bestAt = i, at
			}
		}
		if best < 0 {
			return
		}
		t := tracks[best]
		t.ring.take(func(pkt []byte, at time.Duration, resync bool) { s.packet(t, tracks, pkt, at, resync) })
	}
}

// packet hands one packet to the playable file, which the first packet creates.
func (s *Session) packet(t *SessionTrack, tracks []*SessionTrack, pkt []byte, at time.Duration, resync bool) {
	if s.w == nil && !s.failed {
		s.create(tracks)
	}
	if s.w != nil && t.index == -1 {
		s.join(t)
	}
	if s.w == nil || t.index < 0 {
		s.dropped.Add(1)
		return
	}
	if resync {
		s.w.Resync(t.index)
	}
	s.w.Packet(t.index, pkt, at)
	if err := s.w.Err(); err != nil && !s.failed {
		s.failed = true // the .mjr files go on; the playable file stops here, playable up to it
		s.log.Warn("record: the playable file stopped", "path", s.w.Path(), "err", err)
	}
}

// create makes the playable file, in the format the tracks' video codec is given.
func (s *Session) create(tracks []*SessionTrack) {
	key := "audio"
	for _, t := range tracks {
		if t.codec.IsVideo() {
			key = t.codec.String()
			break
		}
	}
	name, ok := s.opts.Formats[key]
	if !ok {
		name = DefaultFormats[key]
	}
	f, err := playable.FormatByName(name)
	if err == nil {
		s.w, err = playable.New(filepath.Join(s.dir, s.base+f.Ext()))
	}
	if err != nil {
		s.failed = true
		s.log.Warn("record: no playable file", "base", s.base, "err", err)
		return
	}
	for _, t := range tracks {
		s.join(t)
	}
}

// join adds a track to the playable file, if the file can still take it and its format holds it.
func (s *Session) join(t *SessionTrack) {
	i, err := s.w.AddTrack(playable.Track{Codec: t.codec, Fmtp: t.fmtp})
	if err != nil {
		if t.index == -1 {
			s.log.Warn("record: track left out of the playable file", "base", s.base, "codec", t.codec, "err", err)
		}
		t.index = -2 // tried: not again
		return
	}
	t.index = i
}

// Close ends the recording: remove the tracks from their receivers first. The .mjr files are
// closed and the playable file is finished (its index and duration written). It returns the first
// error met.
func (s *Session) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		tracks := s.tracks
		s.mu.Unlock()
		var errs []error
		for _, t := range tracks {
			errs = append(errs, t.mjr.Close())
			for t.inflight.Load() != 0 {
				runtime.Gosched() // a WriteRTP that saw the recording open finishes its copy
			}
		}
		if s.opts.Playable {
			close(s.stop)
		}
		<-s.done
		if s.w != nil {
			st, err := s.w.Close()
			s.mu.Lock()
			s.stats, s.path = st, s.w.Path()
			s.mu.Unlock()
			errs = append(errs, err)
		}
		s.err = errors.Join(errs...)
	})
	return s.err
}

// Stats returns the counters; the playable file's are known once the session is closed.
func (s *Session) Stats() SessionStats {
	s.mu.Lock()
	tracks := s.tracks
	st := SessionStats{Dropped: s.dropped.Load(), Playable: s.stats, Path: s.path}
	s.mu.Unlock()
	for _, t := range tracks {
		st.MJR = append(st.MJR, t.mjr.Stats())
	}
	return st
}
