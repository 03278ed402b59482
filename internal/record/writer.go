package record

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

// The format's markers (src/record.c).
const (
	fileMagic  = "MJR00002"
	frameMagic = "MEET"
)

// frameHeaderLen is a frame's header: "MEET", the time in ms, the length.
const frameHeaderLen = 10

// writer is the writer goroutine's side of a recording: the file, its buffer, and the renumbering.
// Only that goroutine uses it (and Close, after the goroutine ended).
type writer struct {
	m         *MJR
	file      *os.File
	buf       *bufio.Writer
	created   time.Time     // wall clock at creation
	createdAt time.Duration // the same instant on the packets' clock (sfu.Now)

	started bool
	firstAt time.Duration
	ssrc    uint32 // the recording's: the first packet's
	inSSRC  uint32 // the last packet's
	rw      media.Rewriter
	hold    []heldPacket // the first packets, until startHold passed
	frame   [frameHeaderLen]byte
	dirty   bool
	err     error
}

func newWriter(m *MJR, f *os.File, created time.Time, createdAt time.Duration) *writer {
	w := &writer{m: m, file: f, buf: bufio.NewWriterSize(f, bufferSize), created: created, createdAt: createdAt}
	w.rw.Init(m.codec.ClockRate())
	copy(w.frame[:], frameMagic)
	return w
}

// start writes the file's magic right away, as Janus does: the file is a recording from the start.
func (w *writer) start() error {
	w.write([]byte(fileMagic))
	w.flush()
	return w.err
}

// The first packets are held for startHold of arrival time (at most startMax of them) and written
// in sequence order: the renumbering starts from the first packet written and refuses packets from
// before it, so a packet the network delayed past the first one to arrive (the start of a keyframe,
// often) would otherwise be lost to the recording.
const (
	startHold = 100 * time.Millisecond
	startMax  = 64
)

// heldPacket is a packet held at the start, copied out of the ring.
type heldPacket struct {
	b      []byte
	at     time.Duration
	resync bool
}

// packet takes one packet (pkt is the ring's copy) that arrived at: held at the start, written
// after it.
func (w *writer) packet(pkt []byte, at time.Duration, resync bool) {
	if w.started {
		w.write1(pkt, at, resync)
		return
	}
	w.hold = append(w.hold, heldPacket{b: append([]byte(nil), pkt...), at: at, resync: resync})
	if at-w.hold[0].at >= startHold || len(w.hold) >= startMax {
		w.release()
	}
}

// releaseBy writes the held packets if the first of them arrived startHold before now (a stream
// that sent a few packets and stopped).
func (w *writer) releaseBy(now time.Duration) {
	if len(w.hold) > 0 && now-w.hold[0].at >= startHold {
		w.release()
	}
}

// release writes the held packets in sequence order, the recording starting when the first of them
// arrived.
func (w *writer) release() {
	if len(w.hold) == 0 {
		return
	}
	first := w.hold[0]
	base := binary.BigEndian.Uint16(first.b[2:4])
	sort.SliceStable(w.hold, func(i, j int) bool {
		return int16(binary.BigEndian.Uint16(w.hold[i].b[2:4])-base) < int16(binary.BigEndian.Uint16(w.hold[j].b[2:4])-base)
	})
	h, ok := media.ParseRTP(w.hold[0].b)
	if ok && w.err == nil {
		w.started, w.firstAt, w.ssrc, w.inSSRC = true, first.at, h.SSRC, h.SSRC
		w.info(first.at)
	}
	for _, p := range w.hold {
		w.write1(p.b, max(p.at, first.at), p.resync)
	}
	w.hold = nil
}

// write1 writes one packet, which it renumbers in place.
func (w *writer) write1(pkt []byte, at time.Duration, resync bool) {
	h, ok := media.ParseRTP(pkt)
	if !ok || !w.started || w.err != nil { // the receiver parsed it already: only a failed file gets here
		w.m.dropped.Add(1)
		return
	}
	if resync || h.SSRC != w.inSSRC {
		w.inSSRC = h.SSRC
		w.rw.Switch()
	}
	f := media.NoLayers()
	payload := h.Payload(pkt)
	if len(payload) == 0 {
		// Padding carries no media: leave no hole in the numbering for the post-processor to
		// take for a loss.
		w.rw.Drop(&h, &f, payload, false)
		return
	}
	mp, ok := w.rw.Rewrite(&h, &f, payload, at)
	if !ok {
		w.m.dropped.Add(1)
		return
	}
	media.SetSeq(pkt, mp.OutSeq)
	media.SetTimestamp(pkt, mp.Timestamp(h.Timestamp))
	media.SetSSRC(pkt, w.ssrc)
	ms := max(at-w.firstAt, 0).Milliseconds()
	binary.BigEndian.PutUint32(w.frame[4:8], uint32(ms))
	binary.BigEndian.PutUint16(w.frame[8:10], uint16(len(pkt)))
	w.write(w.frame[:])
	w.write(pkt)
	if w.err != nil {
		w.m.dropped.Add(1)
		return
	}
	w.m.packets.Add(1)
}

// info writes the info header, which Janus writes with the first packet: it says when that came.
func (w *writer) info(firstAt time.Duration) {
	info := w.m.info
	info.FirstPacket = w.created.Add(firstAt - w.createdAt).UnixMicro()
	b, err := json.Marshal(&info)
	if err != nil {
		w.fail(fmt.Errorf("info header: %w", err))
		return
	}
	var n [2]byte
	binary.BigEndian.PutUint16(n[:], uint16(len(b)))
	w.write(n[:])
	w.write(b)
}

func (w *writer) write(b []byte) {
	if w.err != nil {
		return
	}
	if _, err := w.buf.Write(b); err != nil {
		w.fail(err)
		return
	}
	w.dirty = true
	w.m.bytes.Add(uint64(len(b)))
}

func (w *writer) flush() {
	if w.err != nil || !w.dirty {
		return
	}
	if err := w.buf.Flush(); err != nil {
		w.fail(err)
	}
	w.dirty = false
}

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = fmt.Errorf("record: %s: %w", w.m.path, err)
	}
}

// close writes what is held, flushes and closes the file.
func (w *writer) close() error {
	w.release()
	w.flush()
	if err := w.file.Close(); err != nil {
		w.fail(err)
	}
	return w.err
}
