package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"
)

// recorderRing is how many frames the recorder can hold while the disk is slow: one second, after
// which frames are dropped (and counted) rather than stalling the mixer.
const recorderRing = 50

// wavHeaderLen is the canonical PCM WAVE header: the RIFF chunk header, a 16-byte "fmt " chunk and
// the "data" chunk header.
const wavHeaderLen = 44

// wavMaxData is the most PCM a WAVE file can describe: the RIFF chunk's size is a 32-bit field
// that counts the 36 header bytes after it as well.
const wavMaxData = math.MaxUint32 - (wavHeaderLen - 8)

// wavSyncFrames is how often (in frames) the writer flushes and updates the header's sizes, so
// that a recording cut short by a crash is still a valid file up to the last second or so.
const wavSyncFrames = 50

// wavFile is what the recorder writes to: an *os.File (tests wrap one to stall the disk).
type wavFile interface {
	io.Writer
	io.WriterAt
	io.Closer
}

// WAVRecorder records a room's mix into a 16-bit PCM WAVE file (Janus's room recording). Write is
// for the mixer goroutine: it copies the frame into a fixed ring and returns; a writer goroutine
// writes the ring out. Janus writes WAVE too, so recordings open in the same tools.
//
// The header is written by hand: it is 44 fixed bytes, and the Go WAVE libraries (go-audio/wav,
// youpy/go-wav) encode through their own buffer types, converting and allocating per write. The
// layout is Microsoft's RIFF WAVE with a WAVE_FORMAT_PCM "fmt " chunk (Multimedia Programming
// Interface and Data Specifications 1.0, 1991; the "canonical" 44-byte header).
type WAVRecorder struct {
	f      Format
	path   string
	file   wavFile
	frames [][]int16 // the ring
	lens   []int     // values held by each slot
	ready  chan int  // filled slots, in order
	free   chan int  // empty slots

	written, dropped atomic.Uint64
	closed           atomic.Bool

	stop      chan struct{}
	exited    chan struct{}
	closeOnce sync.Once
	err       error // the writer's first error, read once exited is closed
}

// NewWAVRecorder creates (or truncates, as Janus does) the file at path and writes a WAVE header
// for f.
func NewWAVRecorder(path string, f Format) (*WAVRecorder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("audio: recording: %w", err)
	}
	r, err := newWAVRecorder(file, path, f)
	if err != nil {
		file.Close()
		return nil, err
	}
	return r, nil
}

func newWAVRecorder(file wavFile, path string, f Format) (*WAVRecorder, error) {
	r := &WAVRecorder{
		f: f, path: path, file: file,
		frames: make([][]int16, recorderRing),
		lens:   make([]int, recorderRing),
		ready:  make(chan int, recorderRing),
		free:   make(chan int, recorderRing),
		stop:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	if _, err := file.Write(wavHeader(f, 0)); err != nil {
		return nil, fmt.Errorf("audio: recording %s: %w", path, err)
	}
	for i := range r.frames {
		r.frames[i] = make([]int16, f.FrameLen())
		r.free <- i
	}
	go r.run()
	return r, nil
}

// wavHeader is the 44-byte header of a file of f holding data bytes of PCM.
func wavHeader(f Format, data uint32) []byte {
	h := make([]byte, 0, wavHeaderLen)
	le := binary.LittleEndian
	block := 2 * f.Channels // bytes per sample frame (16 bits per sample)
	h = append(h, "RIFF"...)
	h = le.AppendUint32(h, data+wavHeaderLen-8)
	h = append(h, "WAVEfmt "...)
	h = le.AppendUint32(h, 16) // the fmt chunk's size
	h = le.AppendUint16(h, 1)  // WAVE_FORMAT_PCM
	h = le.AppendUint16(h, uint16(f.Channels))
	h = le.AppendUint32(h, uint32(f.Rate))
	h = le.AppendUint32(h, uint32(f.Rate*block)) // bytes per second
	h = le.AppendUint16(h, uint16(block))
	h = le.AppendUint16(h, 16) // bits per sample
	h = append(h, "data"...)
	return le.AppendUint32(h, data)
}

// Write queues one frame (up to FrameLen values; the rest is ignored) for the writer. It never
// blocks and allocates nothing: if the writer is a second behind, or the recorder is closed, the
// frame is dropped and counted.
func (r *WAVRecorder) Write(pcm []int16) {
	if r.closed.Load() {
		r.dropped.Add(1)
		return
	}
	select {
	case slot := <-r.free:
		n := copy(r.frames[slot], pcm)
		r.lens[slot] = n - n%r.f.Channels
		r.ready <- slot // never blocks: ready has room for every slot
	default:
		r.dropped.Add(1)
	}
}

// Stats returns how many frames reached the file and how many were dropped (the writer was behind,
// the disk failed, the file was full, or Write came after Close).
func (r *WAVRecorder) Stats() (written, dropped uint64) {
	return r.written.Load(), r.dropped.Load()
}

// Close writes what is queued, sets the header's sizes and closes the file. Calling it again
// returns the same result. A Write racing with Close is safe but may be lost uncounted.
func (r *WAVRecorder) Close() error {
	r.closeOnce.Do(func() {
		r.closed.Store(true)
		close(r.stop)
	})
	<-r.exited
	return r.err
}

// run is the writer goroutine.
func (r *WAVRecorder) run() {
	defer close(r.exited)
	w := &wavWriter{r: r, buf: bufio.NewWriterSize(r.file, 64<<10), bytes: make([]byte, 2*r.f.FrameLen())}
	for {
		select {
		case slot := <-r.ready:
			w.frame(slot)
		case <-r.stop:
			for len(r.ready) > 0 { // drain: Write queues nothing once closed is set
				w.frame(<-r.ready)
			}
			r.err = errors.Join(w.sync(), r.file.Close())
			if r.err != nil {
				r.err = fmt.Errorf("audio: recording %s: %w", r.path, r.err)
			}
			return
		}
	}
}

// wavWriter is the writer goroutine's state.
type wavWriter struct {
	r      *WAVRecorder
	buf    *bufio.Writer
	bytes  []byte // one frame, little-endian
	data   uint32 // PCM bytes written so far
	frames int
	err    error // the first write error; the recording stops there
}

// frame writes the frame in slot and frees the slot.
func (w *wavWriter) frame(slot int) {
	pcm := w.r.frames[slot][:w.r.lens[slot]]
	b := w.bytes[:2*len(pcm)]
	for i, v := range pcm {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	w.r.free <- slot // never blocks: free has room for every slot
	if w.err != nil || uint64(w.data)+uint64(len(b)) > wavMaxData {
		w.r.dropped.Add(1)
		return
	}
	if _, err := w.buf.Write(b); err != nil {
		w.err = err
		w.r.dropped.Add(1)
		return
	}
	w.data += uint32(len(b))
	w.r.written.Add(1)
	if w.frames++; w.frames%wavSyncFrames == 0 {
		w.err = w.sync()
	}
}

// sync flushes the buffer and writes the sizes into the header.
func (w *wavWriter) sync() error {
	if w.err != nil {
		return w.err
	}
	if err := w.buf.Flush(); err != nil {
		return err
	}
	_, err := w.r.file.WriteAt(wavHeader(w.r.f, w.data), 0)
	return err
}
