package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Ring sizes when WithSlots does not give one: about 5 s of 20 ms audio, and about a second of
// video at a few Mbit/s, to ride out a disk that stalls for a moment.
const (
	DefaultAudioSlots = 256
	DefaultVideoSlots = 1024
)

// maxInfo is the longest info header janus-pp-rec reads: it copies the JSON into a 1500-byte
// buffer and terminates it there.
const maxInfo = 1499

// bufferSize is the file buffer: the disk sees large writes, not one per packet.
const bufferSize = 64 << 10

// flushEvery bounds how long written packets may wait in the buffer when little arrives (an audio
// recording fills 64 KiB in tens of seconds), so a file read while recording, or left by a crash,
// lacks at most this much.
const flushEvery = time.Second

// Option configures a recording.
type Option func(*options)

type options struct {
	fmtp, description string
	extensions        map[string]string
	layer             int
	slots             int
}

// WithFmtp records the codec's fmtp line (Janus's "f": the H.264 profile or VP9 profile the
// publisher negotiated), for information.
func WithFmtp(fmtp string) Option { return func(o *options) { o.fmtp = fmtp } }

// WithDescription records a description of the stream (Janus's "d").
func WithDescription(d string) Option { return func(o *options) { o.description = d } }

// WithExtension records that header extension id carries uri (Janus's "x"), so janus-pp-rec can
// read the audio levels or the video orientation the packets carry. Ids outside 1..14 are ignored,
// as Janus ignores them.
func WithExtension(id int, uri string) Option {
	return func(o *options) {
		if id >= 1 && id <= 14 && uri != "" {
			if o.extensions == nil {
				o.extensions = map[string]string{}
			}
			o.extensions[fmt.Sprint(id)] = uri
		}
	}
}

// WithLayer records one layer of a simulcast receiver (0, the default, for a single stream, whose
// SVC layers are all recorded).
func WithLayer(layer int) Option { return func(o *options) { o.layer = layer } }

// WithSlots sizes the ring between the media path and the file (rounded up to a power of two).
func WithSlots(n int) Option { return func(o *options) { o.slots = n } }

// Stats counts what a recording did.
type Stats struct {
	// Packets were written to the file (to its buffer, until Close).
	Packets uint64
	// Dropped packets found the ring full (the disk did not keep up), were larger than a slot,
	// came after a write to the file failed, or were refused by the renumbering (older than a
	// change of SSRC).
	Dropped uint64
	// Bytes is the size of the recording so far, headers and framing included.
	Bytes uint64
}

// MJR is one recording: an sfu.Sink writing the packets of one layer of a track to a .mjr file.
type MJR struct {
	path  string
	codec media.Codec
	layer int
	info  mjrInfo

	// The ring between the media path and the writer.
	ring *ring
	wake chan struct{}

	// Close waits for calls of WriteRTP it raced with (inflight), so that every packet it
	// accepted is written and counted.
	closed   atomic.Bool
	inflight atomic.Int32
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	err      error

	w *writer

	packets, dropped, bytes atomic.Uint64
}

// mjrInfo is the info header, its fields in the order Janus writes them.
type mjrInfo struct {
	Type        string            `json:"t"`
	Codec       string            `json:"c"`
	Fmtp        string            `json:"f,omitempty"`
	Description string            `json:"d,omitempty"`
	Extensions  map[string]string `json:"x,omitempty"`
	Created     int64             `json:"s"`
	FirstPacket int64             `json:"u"`
}

// NewMJR creates the recording at path (its directory must exist; a file there is replaced, as
// Janus's recorder does) and starts its writer. codec is the track's codec; Close ends the
// recording.
func NewMJR(path string, codec media.Codec, opts ...Option) (*MJR, error) {
	if codec.String() == "" {
		return nil, errors.New("record: unknown codec")
	}
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.slots <= 0 {
		o.slots = DefaultAudioSlots
		if codec.IsVideo() {
			o.slots = DefaultVideoSlots
		}
	}
	m := &MJR{path: path, codec: codec, layer: o.layer, wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	kind := "a"
	if codec.IsVideo() {
		kind = "v"
	}
	created, createdAt := time.Now(), sfu.Now()
	m.info = mjrInfo{Type: kind, Codec: codec.String(), Fmtp: o.fmtp, Description: o.description,
		Extensions: o.extensions, Created: created.UnixMicro()}
	if err := m.checkInfo(); err != nil {
		return nil, err
	}
	if err := checkDir(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	m.ring = newRing(o.slots, m.wake)
	m.w = newWriter(m, f, created, createdAt)
	if err := m.w.start(); err != nil {
		f.Close()
		return nil, err
	}
	go m.run()
	return m, nil
}

// checkInfo refuses options that would make an info header janus-pp-rec cannot read.
func (m *MJR) checkInfo() error {
	longest := m.info
	longest.FirstPacket = math.MaxInt64
	b, err := json.Marshal(&longest)
	if err != nil {
		return fmt.Errorf("record: info header: %w", err)
	}
	if len(b) > maxInfo {
		return fmt.Errorf("record: info header of %d bytes (description, fmtp and extensions) exceeds the %d janus-pp-rec reads", len(b), maxInfo)
	}
	return nil
}

// checkDir says clearly when the recording's directory is missing, rather than "no such file".
func checkDir(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("record: directory %s for %s does not exist", dir, filepath.Base(path))
	case err != nil:
		return fmt.Errorf("record: %w", err)
	case !st.IsDir():
		return fmt.Errorf("record: %s for %s is not a directory", dir, filepath.Base(path))
	}
	return nil
}

// Path is the recording's file.
func (m *MJR) Path() string { return m.path }

// Codec is the recorded track's codec.
func (m *MJR) Codec() media.Codec { return m.codec }

// WriteRTP implements sfu.Sink: the packet is copied into the ring for the writer, or dropped and
// counted if the ring is full. It allocates nothing and never waits.
func (m *MJR) WriteRTP(p *sfu.Packet) {
	if p.Layer != m.layer {
		return
	}
	m.inflight.Add(1)
	if !m.closed.Load() {
		m.enqueue(p)
	}
	m.inflight.Add(-1)
}

func (m *MJR) enqueue(p *sfu.Packet) {
	if !m.ring.push(p) {
		m.dropped.Add(1)
	}
}

// Resync implements sfu.Sink: the next packet does not follow the last one (the track was muted),
// so the recording's timestamps jump by the time that passed and its sequence numbers continue.
// It is marked on the next packet, so it reaches the writer in order.
func (m *MJR) Resync() { m.ring.markResync() }

// Close stops the recording: the packets accepted so far are written, the file is flushed and
// closed, so Close waits for the disk to take what the ring holds (not for a sync to the device,
// which Janus does not do either). Remove the recording from its receiver first; a packet arriving
// during or after Close is ignored. Close may be called more than once, and returns the first error
// the recording met (a failed write stops the recording; the packets after it count as dropped).
func (m *MJR) Close() error {
	m.once.Do(func() {
		m.closed.Store(true)
		for m.inflight.Load() != 0 {
			runtime.Gosched() // a WriteRTP that saw the recording open finishes its copy
		}
		close(m.stop)
		<-m.done
		m.err = m.w.close()
	})
	return m.err
}

// Stats returns the counters.
func (m *MJR) Stats() Stats {
	return Stats{Packets: m.packets.Load(), Dropped: m.dropped.Load(), Bytes: m.bytes.Load()}
}

// run is the writer's goroutine: it empties the ring whenever the media path adds to it, flushes
// the buffer now and then, and drains the ring one last time when Close stops it.
func (m *MJR) run() {
	defer close(m.done)
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	for {
		select {
		case <-m.wake:
			m.drain()
		case <-tick.C:
			m.drain()
			m.w.releaseBy(sfu.Now())
			m.w.flush()
		case <-m.stop:
			m.drain()
			return
		}
	}
}

// drain writes every slot the media path has filled.
func (m *MJR) drain() { m.ring.drain(m.w.packet) }
