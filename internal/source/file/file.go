// Package file plays media files in real time into Receivers: the live and ondemand file
// mountpoints of the streaming plugin. It reads Janus's raw 8 kHz G.711 files (.alaw, .mulaw),
// Ogg/Opus (.opus, .ogg) and WebM/Matroska with VP8/VP9 video and Opus audio (.webm, .mkv), and
// sends each frame when the file's timestamps say, from one goroutine per source.
//
// A file is checked when it is opened: one whose content is not what its extension says, or that
// holds no track strata can send, is an error naming the path and the reason.
package file

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// Options configure a file source.
type Options struct {
	// Loop restarts the file at its end, timestamps and sequence numbers continuing (a live
	// mountpoint); otherwise the source stops at the end and Done is closed (ondemand).
	Loop bool
	// Receiver is the configuration of every track's Receiver; the source sets Codec, and ID
	// gets the track's mid appended.
	Receiver sfu.ReceiverConfig
	// AudioPT and VideoPT are the payload types of the dynamic codecs (Opus; VP8, VP9), as a
	// mountpoint's audiopt/videopt set them; 0 keeps the defaults (111; 100, 101). G.711 keeps
	// its static types (PCMU 0, PCMA 8), as Janus sends its raw files.
	AudioPT, VideoPT uint8
}

// Stats count what a source sent.
type Stats struct {
	// Frames and Packets sent over all tracks; Loops is how many times the file restarted.
	Frames, Packets, Loops uint64
}

// Source is an open media file. Tracks are fixed at Open; Start begins playback.
type Source struct {
	path   string
	opts   Options
	dmx    demuxer
	tracks []source.Track
	outs   []*output

	startOnce, closeOnce sync.Once
	started              atomic.Bool
	stop                 chan struct{} // closed by Close
	done                 chan struct{} // closed when playback ends (or Close, if it never started)
	exited               chan struct{} // closed when the goroutine has released the file

	frames, packets, loops atomic.Uint64
	errMu                  sync.Mutex
	err                    error
}

// Open opens the file at path and reads enough of it to know its tracks, checking that its
// content matches its extension. The tracks' Receivers exist from here on.
func Open(path string, opts Options) (*Source, error) {
	dmx, err := openDemuxer(path)
	if err != nil {
		return nil, fmt.Errorf("file source %s: %w", path, err)
	}
	s := &Source{
		path: path, opts: opts, dmx: dmx,
		stop: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{}),
	}
	for i, ti := range dmx.tracks() {
		ti.pt = opts.payloadType(ti)
		out := newOutput(opts.Receiver, ti, i)
		s.outs = append(s.outs, out)
		s.tracks = append(s.tracks, source.Track{
			Kind: ti.kind, MID: out.mid, Label: ti.label,
			Codec: ti.codec, PT: ti.pt, Fmtp: ti.fmtp, Recv: out.local.Receiver(),
		})
	}
	return s, nil
}

// payloadType applies the options' payload types to a dynamic codec's track.
func (o *Options) payloadType(ti trackInfo) uint8 {
	switch {
	case ti.codec == media.CodecPCMU || ti.codec == media.CodecPCMA:
		return ti.pt
	case ti.kind == source.Audio && o.AudioPT != 0:
		return o.AudioPT
	case ti.kind == source.Video && o.VideoPT != 0:
		return o.VideoPT
	}
	return ti.pt
}

// openDemuxer picks the reader from the file's extension; each reader checks the content.
func openDemuxer(path string) (demuxer, error) {
	// Checked before opening: opening a FIFO would block until someone writes to it.
	st, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	var d demuxer
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".alaw", ".pcma":
		d, err = newRawG711(f, st.Size(), media.CodecPCMA)
	case ".mulaw", ".ulaw", ".pcmu":
		d, err = newRawG711(f, st.Size(), media.CodecPCMU)
	case ".opus", ".ogg", ".oga":
		d, err = newOggOpus(f)
	case ".webm", ".mkv", ".mka":
		d, err = newWebM(f)
	default:
		err = fmt.Errorf("unsupported file type %q (want .alaw, .mulaw, .opus, .ogg, .webm or .mkv)", ext)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return d, nil
}

// unwrapPath drops the *os.PathError wrapper: the caller's message names the path already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Tracks are the file's tracks, in the file's order.
func (s *Source) Tracks() []source.Track { return s.tracks }

// Start begins playback (once; later calls do nothing).
func (s *Source) Start() {
	s.startOnce.Do(func() {
		select {
		case <-s.stop: // closed before it started
			return
		default:
		}
		s.started.Store(true)
		go s.run()
	})
}

// Done is closed when playback has ended: a file without Loop reached its end, reading failed
// (Err says why), or the source was closed.
func (s *Source) Done() <-chan struct{} { return s.done }

// Err is why playback stopped before the end of the file, or nil.
func (s *Source) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Stats returns the counters.
func (s *Source) Stats() Stats {
	return Stats{Frames: s.frames.Load(), Packets: s.packets.Load(), Loops: s.loops.Load()}
}

// Close stops playback, closes the file and the tracks' Receivers. It may be called more than
// once.
func (s *Source) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		s.startOnce.Do(func() {}) // a later Start does nothing
		if !s.started.Load() {
			s.dmx.close()
			close(s.exited)
			close(s.done)
		}
		<-s.exited
		for _, o := range s.outs {
			o.local.Close()
		}
	})
	return nil
}
