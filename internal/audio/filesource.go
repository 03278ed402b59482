package audio

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hraban/opus"
)

// fileRing is how many decoded frames the reader keeps ahead of the mixer: 200 ms, enough to ride
// over a slow read or a scheduling delay without holding much memory per announcement.
const fileRing = 10

// FileSource plays an Ogg/Opus file into a room (Janus's play_file): a reader goroutine decodes
// ahead with libopusfile into a fixed ring of frames in the room's format, so the mixer goroutine
// never waits on the disk. Next, Done and Underruns are for one goroutine (the mixer's); Close
// must not run concurrently with them.
type FileSource struct {
	path   string
	frames [][]int16 // the ring, allocated by OpenFile
	ready  chan int  // decoded frames' slots, in play order
	free   chan int  // slots the mixer has released
	held   int       // the slot Next returned last, released by the following call; -1 if none

	underruns atomic.Uint64
	ended     atomic.Bool // the reader has queued its last frame (or stopped on an error)
	closed    atomic.Bool

	errMu sync.Mutex
	err   error // why decoding stopped early, if it did

	stop      chan struct{}
	exited    chan struct{}
	closeOnce sync.Once
}

// OpenFile opens the Ogg/Opus file at path for a room of format f and decodes its first frame, so a
// missing file, one that is not Ogg/Opus, or one without audio is an error here, naming the path
// and the reason. With loop, the file restarts from the beginning when it ends.
func OpenFile(path string, f Format, loop bool) (*FileSource, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	d, err := openFileDecoder(path, f, loop)
	if err != nil {
		return nil, fileError(path, err)
	}
	s := &FileSource{
		path:   path,
		frames: make([][]int16, fileRing),
		ready:  make(chan int, fileRing),
		free:   make(chan int, fileRing),
		held:   -1,
		stop:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	for i := range s.frames {
		s.frames[i] = make([]int16, f.FrameLen())
	}
	more, err := d.next(s.frames[0])
	if err == nil && !more {
		err = errors.New("no audio before the end of the file")
	}
	if err != nil {
		d.close()
		return nil, fileError(path, err)
	}
	s.ready <- 0
	for i := 1; i < fileRing; i++ {
		s.free <- i
	}
	go s.run(d)
	return s, nil
}

// run is the reader goroutine: it decodes into every slot the mixer frees until the file ends or
// Close stops it, and owns (and finally closes) the decoder and the file.
func (s *FileSource) run(d *fileDecoder) {
	defer close(s.exited)
	defer d.close()
	for {
		var slot int
		select {
		case <-s.stop:
			return
		default:
		}
		select {
		case slot = <-s.free:
		case <-s.stop:
			return
		}
		more, err := d.next(s.frames[slot])
		if err != nil {
			s.errMu.Lock()
			s.err = fileError(s.path, err)
			s.errMu.Unlock()
		}
		if !more || err != nil {
			s.free <- slot
			s.ended.Store(true)
			return
		}
		s.ready <- slot // never blocks: ready has room for every slot
	}
}

// Next returns the next 20 ms frame in the room's format, valid until the following call, or
// ok=false when none is ready (an underrun, counted, unless the file is done). It never blocks and
// allocates nothing.
func (s *FileSource) Next() (pcm []int16, ok bool) {
	if s.held >= 0 {
		s.free <- s.held // never blocks: free has room for every slot
		s.held = -1
	}
	if s.closed.Load() {
		return nil, false
	}
	select {
	case slot := <-s.ready:
		s.held = slot
		return s.frames[slot], true
	default:
		if !s.ended.Load() {
			s.underruns.Add(1)
		}
		return nil, false
	}
}

// Done reports whether the file has ended (it is not looping, or decoding failed) and Next has
// returned every frame.
func (s *FileSource) Done() bool {
	// ended first: once it is set, every frame the reader will ever queue is in ready.
	return s.ended.Load() && len(s.ready) == 0
}

// Underruns is how many times Next found no frame ready before the file ended.
func (s *FileSource) Underruns() uint64 { return s.underruns.Load() }

// Err is why decoding stopped before the end of the file, or nil. Frames decoded until then still
// play.
func (s *FileSource) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Close stops the reader goroutine and closes the file, waiting for both. It may be called more
// than once; Next returns nothing afterwards.
func (s *FileSource) Close() {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.stop)
	})
	<-s.exited
}

// fileError names the path in an error from opening or decoding it.
func fileError(path string, err error) error {
	var se opus.StreamError
	if errors.As(err, &se) {
		err = streamReason(se)
	}
	return fmt.Errorf("audio: announcement %s: %w", path, err)
}

// streamReason explains libopusfile's error codes (its own strings are just the C names).
func streamReason(se opus.StreamError) error {
	reason := "libopusfile error " + se.Error()
	switch se {
	case opus.ErrStreamNotFormat:
		reason = "not an Ogg/Opus file"
	case opus.ErrStreamBadHeader:
		reason = "malformed Opus header"
	case opus.ErrStreamVersion:
		reason = "unsupported Ogg/Opus version"
	case opus.ErrStreamNotAudio:
		reason = "the Ogg stream is not audio"
	case opus.ErrStreamRead, opus.ErrStreamFault:
		reason = "read error"
	case opus.ErrStreamBadPacked:
		reason = "corrupt Opus packet"
	case opus.ErrStreamBadLink:
		reason = "corrupt Ogg stream"
	case opus.ErrStreamBadTimestamp:
		// What libopusfile reports when no audio page follows the headers.
		reason = "no playable audio (the first audio page is missing, truncated or has a bad timestamp)"
	}
	return fmt.Errorf("%s (%w)", reason, se)
}
