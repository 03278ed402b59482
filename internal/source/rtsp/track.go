package rtsp

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// choice is the format of a medium the source plays, and what strata calls it.
type choice struct {
	medi  *description.Media
	forma format.Format
	kind  source.Kind
	codec media.Codec
	pt    uint8 // what the track's packets carry
	fmtp  string
}

// choose picks the first format of a medium that strata forwards; ok is false if there is none.
func choose(medi *description.Media) (choice, bool) {
	if medi.IsBackChannel {
		return choice{}, false
	}
	for _, f := range medi.Formats {
		c := choice{medi: medi, forma: f, kind: source.Video}
		switch f := f.(type) {
		case *format.H264:
			c.codec = media.CodecH264
		case *format.VP8:
			c.codec = media.CodecVP8
		case *format.VP9:
			c.codec = media.CodecVP9
		case *format.AV1:
			c.codec = media.CodecAV1
		case *format.Opus:
			c.kind, c.codec = source.Audio, media.CodecOpus
		case *format.G711:
			if f.SampleRate != 8000 || f.ChannelCount != 1 {
				continue // not the 8 kHz mono G.711 WebRTC carries
			}
			c.kind, c.codec = source.Audio, media.CodecPCMA
			if f.MULaw {
				c.codec = media.CodecPCMU
			}
		default:
			continue
		}
		c.fmtp, c.pt = fmtpString(f.FMTP()), f.PayloadType()
		return c, true
	}
	return choice{}, false
}

// fmtpString writes fmtp parameters in a stable order.
func fmtpString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(k + "=" + m[k])
	}
	return b.String()
}

// track is one of the source's tracks across sessions. The packets of a session are renumbered
// onto one continuous stream (one SSRC, sequence numbers and timestamps going on where the last
// session stopped), so that the Receiver and its sinks see a reconnection as a short gap, not as
// a new stream whose sequence numbers might look like duplicates.
type track struct {
	source.Track
	log *slog.Logger

	// The session's medium and the server's SSRC, for keyframe requests (any goroutine). pli is
	// armed by the session's first packet: gortsplib's client rebuilds its media while SETUP and
	// PLAY may still switch transport, and must not be written to concurrently until then.
	mu      sync.Mutex
	medi    *description.Media
	pli     func(*description.Media, uint32)
	nextPLI func(*description.Media, uint32)
	inSSRC  atomic.Uint32

	silent   atomic.Bool // the server changed the codec: nothing is forwarded
	anchor   atomic.Bool // the next packet starts a session: renumber from it
	packets  *atomic.Uint64
	oversize *atomic.Uint64

	// The packet path (one goroutine at a time: the session's reader of the medium).
	ssrc    uint32
	seqOff  uint16
	tsOff   uint32
	lastSeq uint16
	lastTS  uint32
	lastAt  time.Duration
	started bool
	buf     []byte
}

func newTrack(c choice, index int, rc sfu.ReceiverConfig, log *slog.Logger, packets, oversize *atomic.Uint64) *track {
	t := &track{log: log, packets: packets, oversize: oversize, ssrc: uint32(index) + 1, buf: make([]byte, media.SlotSize)}
	mid := fmt.Sprint(index)
	rc.Codec = c.codec
	if rc.ID != "" {
		rc.ID += "/" + mid
	} else {
		rc.ID = mid
	}
	t.Track = source.Track{
		Kind: c.kind, MID: mid, Codec: c.codec, PT: c.pt, Fmtp: c.fmtp,
		Recv: sfu.NewReceiver(rc, t.requestKeyframe),
	}
	return t
}

// matches reports whether a medium of a new session carries what the track carries: same codec
// and clock (the payload type and fmtp may change; packets are forwarded under the track's).
func (t *track) matches(c choice) bool {
	return c.codec == t.Codec && c.forma.ClockRate() == int(t.Codec.ClockRate())
}

// attach binds the track to a new session's medium, or (c nil) leaves it without one.
func (t *track) attach(c *choice, pli func(*description.Media, uint32)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.medi, t.pli, t.nextPLI = nil, nil, nil
	if c == nil {
		return
	}
	if !t.matches(*c) {
		if !t.silent.Swap(true) {
			t.log.Warn("rtsp: the server changed a track's codec; the track stays silent",
				"mid", t.MID, "was", t.Codec.String(), "now", formatName(c.forma))
		}
		return
	}
	t.silent.Store(false)
	t.anchor.Store(true)
	t.medi, t.nextPLI = c.medi, pli
}

// requestKeyframe is the Receiver's KeyframeRequester: a PLI to the server over the session.
func (t *track) requestKeyframe(int, uint32) {
	t.mu.Lock()
	medi, pli := t.medi, t.pli
	t.mu.Unlock()
	if pli != nil {
		pli(medi, t.inSSRC.Load())
	}
}

// write renumbers a packet of the session onto the track's stream and hands it to the
// Receiver. It allocates nothing.
func (t *track) write(pkt *rtp.Packet) {
	if t.silent.Load() {
		return
	}
	now := sfu.Now()
	if t.anchor.Swap(false) {
		t.inSSRC.Store(pkt.SSRC)
		t.mu.Lock()
		t.pli = t.nextPLI
		t.mu.Unlock()
		t.seqOff, t.tsOff = 0, 0
		if t.started {
			// A new session may start mid-picture-group: ask for a keyframe (video only, as
			// the Receiver rate-limits) rather than wait for viewers to notice.
			t.Recv.RequestKeyframe(0, now)
			// Go on one sequence number and the elapsed time after the last packet.
			elapsed := uint32((now - t.lastAt) * time.Duration(t.Codec.ClockRate()) / time.Second)
			t.seqOff = t.lastSeq + 1 - pkt.SequenceNumber
			t.tsOff = t.lastTS + max(elapsed, 1) - pkt.Timestamp
		}
	}
	h := pkt.Header
	h.SSRC = t.ssrc
	h.PayloadType = t.PT
	h.SequenceNumber += t.seqOff
	h.Timestamp += t.tsOff
	out := rtp.Packet{Header: h, Payload: pkt.Payload}
	n, err := out.MarshalTo(t.buf)
	if err != nil {
		// Larger than a packet cache slot: a server sending big packets over TCP. Dropped (a
		// viewer could not take it over UDP either), counted, and said once.
		if t.oversize.Add(1) == 1 {
			t.log.Warn("rtsp: RTP packets larger than strata forwards are dropped", "mid", t.MID,
				"bytes", out.MarshalSize(), "max", len(t.buf))
		}
		return
	}
	t.lastSeq, t.lastTS, t.lastAt, t.started = h.SequenceNumber, h.Timestamp, now, true
	t.packets.Add(1)
	t.Recv.WriteRTP(0, t.buf[:n], now)
}
