package file

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// trackInfo is what a demuxer says about one of its tracks.
type trackInfo struct {
	kind  source.Kind
	codec media.Codec
	pt    uint8
	fmtp  string
	label string
}

// frame is one coded frame of a track, as the file stores it.
type frame struct {
	track int
	// ts is the frame's time from the start of the file in the track's RTP clock; dur is how
	// long it lasts in the same clock (0 if the file does not say).
	ts, dur int64
	data    []byte
}

// demuxer reads one file format.
type demuxer interface {
	tracks() []trackInfo
	// play reads the file from its start and calls emit with every frame in file order, until
	// the end (nil), emit returns false (errStopped) or the file turns out to be malformed. The
	// frame is valid only during the call.
	play(emit func(*frame) bool) error
	close() error
}

// errStopped is what play returns when emit asked it to stop.
var errStopped = errors.New("stopped")

// videoMTU is the largest RTP payload a video frame is cut into: room under a 1200-byte packet
// for the RTP header, extensions and the SRTP tag a DownTrack adds.
const videoMTU = 1100

// Default payload types of the dynamic codecs: Opus and VP8 as Janus's sample mountpoints
// number them (111, 100), VP9 the next one.
const (
	ptOpus = 111
	ptVP8  = 100
	ptVP9  = 101
)

// output is one track's way out: a LocalSource and, for video, the payloader that cuts frames.
type output struct {
	local *sfu.LocalSource
	mid   string
	clock int64
	pay   rtp.Payloader // nil: one frame is one packet (audio)
	first bool          // no packet sent yet (it gets the marker, as Janus marks the first)
}

func newOutput(rc sfu.ReceiverConfig, ti trackInfo, index int) *output {
	mid := strconv.Itoa(index)
	rc.Codec = ti.codec
	if rc.ID != "" {
		rc.ID += "/" + mid
	} else {
		rc.ID = mid
	}
	o := &output{
		local: sfu.NewLocalSource(rc, uint32(index+1), ti.pt),
		mid:   mid, clock: int64(ti.codec.ClockRate()), first: true,
	}
	switch ti.codec {
	case media.CodecVP8:
		o.pay = &codecs.VP8Payloader{EnablePictureID: true}
	case media.CodecVP9:
		o.pay = &codecs.VP9Payloader{}
	}
	return o
}

// toDuration converts ticks of the track's clock to time.
func (o *output) toDuration(ticks int64) time.Duration {
	return time.Duration(ticks * int64(time.Second) / o.clock)
}

// toTicks converts time to ticks of the track's clock.
func (o *output) toTicks(d time.Duration) int64 { return int64(d) * o.clock / int64(time.Second) }

// send writes one frame with RTP timestamp ts and returns how many packets it took. Video frames
// are cut by the codec's payloader; the marker is on a frame's last packet.
func (o *output) send(data []byte, ts uint32) int {
	now := sfu.Now()
	if o.pay == nil {
		o.local.Write(data, ts, o.first, now)
		o.first = false
		return 1
	}
	parts := o.pay.Payload(videoMTU, data)
	for i, p := range parts {
		o.local.Write(p, ts, i == len(parts)-1, now)
	}
	return len(parts)
}

// run is the playback goroutine: it sends every frame at its time, scheduled against the start
// of playback (no drift from sleeping per frame), and with Loop starts the file over, the next
// pass continuing where the last frame of the previous one ended.
func (s *Source) run() {
	defer close(s.done)
	defer close(s.exited)
	defer s.dmx.close()
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var base time.Duration // where the current pass starts on the playback clock
	for {
		end, err := s.pass(start, base, timer)
		if err != nil {
			if !errors.Is(err, errStopped) {
				s.setErr(err)
			}
			return
		}
		if !s.opts.Loop {
			return
		}
		if end <= base {
			s.setErr(errors.New("no frames to loop over"))
			return
		}
		base = end
		s.loops.Add(1)
	}
}

// pass plays the file once from base on the playback clock and returns where its last frame
// ends. The first frame of the file is at base, whatever time the file gives it.
func (s *Source) pass(start time.Time, base time.Duration, timer *time.Timer) (time.Duration, error) {
	end := base
	var origin time.Duration
	seen := false
	err := s.dmx.play(func(f *frame) bool {
		o := s.outs[f.track]
		fileAt := o.toDuration(f.ts)
		if !seen {
			origin, seen = fileAt, true
		}
		at := base + fileAt - origin
		if !s.waitUntil(timer, start.Add(at)) {
			return false
		}
		ts := uint32(o.toTicks(base-origin) + f.ts)
		s.packets.Add(uint64(o.send(f.data, ts)))
		s.frames.Add(1)
		end = max(end, at+o.toDuration(f.dur))
		return true
	})
	return end, err
}

// waitUntil waits for t on the timer, or returns false when the source is closed.
func (s *Source) waitUntil(timer *time.Timer, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		select {
		case <-s.stop:
			return false
		default:
			return true
		}
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-s.stop:
		return false
	}
}

func (s *Source) setErr(err error) {
	s.errMu.Lock()
	s.err = fmt.Errorf("file source %s: %w", s.path, err)
	s.errMu.Unlock()
}
