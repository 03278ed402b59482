package streaming

import (
	"fmt"
	"time"

	"github.com/strata-rtc/strata/internal/source"
	"github.com/strata-rtc/strata/internal/source/rtsp"
)

// openRTSP opens an rtsp mountpoint: create returns once the server answered DESCRIBE, SETUP and
// PLAY; the source reconnects by itself afterwards (rtsp_reconnect_delay), with the same
// Receivers, so viewers stay. The streams are the audio and video (as create's audio and video
// ask) that the server offers in a codec strata forwards, named "a" and "v" (then "a1", "v1").
func openRTSP(p *Plugin, c *Create) (*opened, *Error) {
	r := c.RTSP
	if r.URL == nil || *r.URL == "" {
		return nil, errorf(ErrCantCreate, "Can't add 'rtsp' stream, missing url")
	}
	cfg := rtsp.Config{URL: *r.URL, AudioPT: uint8(r.AudioPT), VideoPT: uint8(r.VideoPT), Log: p.log}
	if r.User != nil {
		cfg.User = *r.User
	}
	if r.Password != nil {
		cfg.Password = *r.Password
	}
	if r.ReconnectDelay != nil {
		cfg.ReconnectDelay = time.Duration(*r.ReconnectDelay) * time.Second
	}
	if r.Timeout != nil && *r.Timeout > 0 {
		cfg.Timeout = time.Duration(*r.Timeout) * time.Second
	}
	src, err := rtsp.Open(cfg, p.receiverConfig())
	if err != nil {
		return nil, errorf(ErrCantCreate, "Can't add 'rtsp' stream, error creating the source (%v)", err)
	}
	o := &opened{src: src}
	count := map[source.Kind]int{}
	for _, t := range src.Tracks() {
		if t.Kind == source.Audio && !r.Audio || t.Kind == source.Video && !r.Video || t.Recv == nil {
			continue
		}
		mid := string(t.Kind[0])
		if n := count[t.Kind]; n > 0 {
			mid = fmt.Sprintf("%s%d", mid, n)
		}
		count[t.Kind]++
		o.streams = append(o.streams, &mpStream{kind: t.Kind, mid: mid, label: t.Label, codec: t.Codec,
			codecName: t.Codec.String(), pt: int(t.PT), fmtp: t.Fmtp, recv: t.Recv, bufferKF: r.VideoBufferKF && t.Kind == source.Video})
	}
	if len(o.streams) == 0 {
		_ = src.Close()
		return nil, errorf(ErrCantCreate, "Can't add 'rtsp' stream, the server offers no %s strata can forward", wanted(r))
	}
	return o, nil
}

func wanted(r *RTSPSource) string {
	switch {
	case r.Audio && r.Video:
		return "audio or video"
	case r.Audio:
		return "audio"
	}
	return "video"
}
