// Package mjrplay plays Janus .mjr recordings in real time: one track per file (its codec from the
// file's info header), each feeding its own sfu.Receiver with the packets as recorded — payloads,
// markers and header extensions untouched — so that a viewer's DownTrack forwards them as it
// forwards a published track.
//
// One goroutine plays every track of a source. Each packet has a place on the recording's timeline,
// computed from its RTP timestamp as Janus's player and janus-pp-rec compute it (a pause Janus's
// recorder left out of the timestamps is left out of the playback too); the tracks are aligned by
// the time their first packet was recorded (the info header's "u"). The goroutine sleeps until each packet's
// moment, measured from the start time, so that lateness never accumulates: a packet sent late
// does not delay the ones after it.
//
// The packets go out renumbered onto one continuous stream per track: one SSRC, sequence numbers
// that continue across the recording's own SSRC changes, and timestamps taken from the timeline,
// advanced by the time a Pause lasted, so after Resume the stream continues where it stopped and
// its timestamps still follow the clock.
package mjrplay

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// The payload types Janus's Record&Play offers a recording's tracks with: its static ones for the
// codecs that have one, 111 for other audio and 100 for video.
const (
	AudioPT = 111
	VideoPT = 100
)

// maxTrackOffset bounds how far apart the first packets of two tracks may be for their recorded
// times to be trusted: farther apart, the clocks of the files disagree and both start at once.
const maxTrackOffset = time.Minute

// Stats counts what a playback did.
type Stats struct {
	// Packets were handed to the tracks' Receivers.
	Packets uint64
	// Skipped frames could not be played: bad frames, or the rest of a file cut short (each file
	// that ends early counts once).
	Skipped uint64
}

// Source plays a recording's files. Create it with Open, add sinks to its tracks' Receivers, then
// Start it.
type Source struct {
	tracks []source.Track
	play   []*track

	startOnce sync.Once
	closeOnce sync.Once
	stop      chan struct{}
	done      chan struct{}
	exited    chan struct{} // closed when the goroutine returns (or at Close if it never ran)
	wake      chan struct{}

	mu       sync.Mutex // guards paused and pausedAt
	paused   bool
	pausedAt time.Duration

	packets, skipped atomic.Uint64
}

// Open reads the info header and the first packet of each file: a file that is not a recording,
// holds data or an unknown codec, or has no packet is an error here. rc is the configuration of
// every track's Receiver (its Codec is set per track, its ID suffixed with the track's kind).
func Open(paths []string, rc sfu.ReceiverConfig) (*Source, error) {
	if len(paths) == 0 {
		return nil, errors.New("mjrplay: no files to play")
	}
	s := &Source{stop: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{}),
		wake: make(chan struct{}, 1)}
	for _, p := range paths {
		t, err := openTrack(p, rc)
		if err != nil {
			s.closeTracks()
			return nil, err
		}
		s.play = append(s.play, t)
	}
	alignTracks(s.play)
	for _, t := range s.play {
		s.tracks = append(s.tracks, t.desc)
		s.skipped.Add(t.skippedAtOpen)
	}
	return s, nil
}

// Tracks are the recording's tracks, one per file, in the order of the paths.
func (s *Source) Tracks() []source.Track { return s.tracks }

// Start begins the playback (once).
func (s *Source) Start() {
	s.startOnce.Do(func() { go s.run() })
}

// Pause holds the playback where it is.
func (s *Source) Pause() {
	s.mu.Lock()
	if !s.paused {
		s.paused, s.pausedAt = true, sfu.Now()
	}
	s.mu.Unlock()
	s.poke()
}

// Resume continues a paused playback from where it stopped; the pause is added to the timeline.
func (s *Source) Resume() {
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
	s.poke()
}

// Paused reports whether the playback is paused.
func (s *Source) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

func (s *Source) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Done is closed when every track has played to its end, or when the source is closed.
func (s *Source) Done() <-chan struct{} { return s.done }

// Stats returns the counters.
func (s *Source) Stats() Stats {
	return Stats{Packets: s.packets.Load(), Skipped: s.skipped.Load()}
}

// Close stops the playback, closes the files and the Receivers. It may be called more than once.
func (s *Source) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		s.startOnce.Do(func() { close(s.exited) }) // never started: nothing to wait for
		<-s.exited
		s.closeTracks()
		select {
		case <-s.done:
		default:
			close(s.done)
		}
	})
	return nil
}

func (s *Source) closeTracks() {
	for _, t := range s.play {
		t.close()
	}
}

// run is the playback goroutine: it sends the earliest pending packet of all tracks when its time
// comes, until every track has ended.
func (s *Source) run() {
	defer close(s.exited)
	start := sfu.Now()
	var shift time.Duration // the pauses so far
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		if d, ok := s.waitWhilePaused(); !ok {
			return
		} else if d > 0 {
			shift += d
			for _, t := range s.play {
				t.shiftBy(d)
			}
		}
		t := s.earliest()
		if t == nil {
			close(s.done)
			return
		}
		if wait := start + shift + t.due - sfu.Now(); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-s.wake:
				if !timer.Stop() {
					<-timer.C
				}
				continue // paused, or nothing: look again
			case <-s.stop:
				timer.Stop()
				return
			}
		}
		t.send(sfu.Now())
		s.packets.Add(1)
		s.skipped.Add(t.advance())
	}
}

// waitWhilePaused blocks while the playback is paused and returns how long it was; ok is false
// when the source is closed.
func (s *Source) waitWhilePaused() (time.Duration, bool) {
	s.mu.Lock()
	paused, at := s.paused, s.pausedAt
	s.mu.Unlock()
	if !paused {
		return 0, true
	}
	for paused {
		select {
		case <-s.wake:
		case <-s.stop:
			return 0, false
		}
		s.mu.Lock()
		paused = s.paused
		s.mu.Unlock()
	}
	return sfu.Now() - at, true
}

// earliest is the track whose pending packet comes first; nil when every track has ended.
func (s *Source) earliest() *track {
	var first *track
	for _, t := range s.play {
		if t.pending && (first == nil || t.due < first.due) {
			first = t
		}
	}
	return first
}

// alignTracks places each track's start at the time its first packet was recorded, relative to
// the earliest track's.
func alignTracks(ts []*track) {
	var earliest time.Time
	for _, t := range ts {
		if f := t.info.FirstPacket; !f.IsZero() && f.Unix() > 0 && (earliest.IsZero() || f.Before(earliest)) {
			earliest = f
		}
	}
	if earliest.IsZero() {
		return
	}
	for _, t := range ts {
		f := t.info.FirstPacket
		if f.IsZero() || f.Unix() <= 0 {
			continue
		}
		if off := f.Sub(earliest); off < maxTrackOffset {
			t.offset = off
			t.due += off
		}
	}
}

// openTrack opens one file and reads its first packet.
func openTrack(path string, rc sfu.ReceiverConfig) (*track, error) {
	r, err := record.OpenMJR(path)
	if err != nil {
		return nil, fmt.Errorf("mjrplay: %w", err)
	}
	info := r.Info()
	codec := media.CodecByName(info.Codec)
	kind := source.Audio
	switch {
	case info.Type == "d":
		err = fmt.Errorf("mjrplay: %s: a data recording, which is not played", path)
	case codec == media.CodecUnknown:
		err = fmt.Errorf("mjrplay: %s: unknown codec %q", path, info.Codec)
	case codec.IsVideo() != (info.Type == "v"):
		err = fmt.Errorf("mjrplay: %s: codec %s in a recording of type %q", path, info.Codec, info.Type)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	if codec.IsVideo() {
		kind = source.Video
	}
	rc.Codec = codec
	rc.ID += "/" + string(kind)
	recv := sfu.NewReceiver(rc, func(int, uint32) {}) // a file has nobody to ask for a keyframe
	t := newTrack(r, recv, codec)
	t.desc = source.Track{Kind: kind, Label: filepath.Base(path), Codec: codec, PT: payloadType(codec),
		Fmtp: info.Fmtp, Recv: recv}
	recv.SetLayerSSRC(0, t.ssrc)
	skipped, err := t.read()
	t.skippedAtOpen = skipped
	if err != nil {
		t.close()
		if err == io.EOF {
			err = record.ErrNoMedia
		}
		return nil, fmt.Errorf("mjrplay: %s: %w", path, err)
	}
	return t, nil
}

// payloadType is the payload type Janus offers codec with.
func payloadType(c media.Codec) uint8 {
	switch c {
	case media.CodecPCMU:
		return 0
	case media.CodecPCMA:
		return 8
	case media.CodecG722:
		return 9
	}
	if c.IsVideo() {
		return VideoPT
	}
	return AudioPT
}
