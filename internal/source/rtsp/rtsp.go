// Package rtsp pulls media from an RTSP server or camera (the streaming plugin's rtsp
// mountpoints) with github.com/bluenviron/gortsplib: DESCRIBE, SETUP and PLAY of every medium
// strata can forward (H.264, VP8, VP9, AV1 video; Opus, G.711 audio), RTP into the tracks'
// Receivers, keyframe requests back to the server as RTCP PLI over the session, and a new
// session after a delay whenever the server goes away.
package rtsp

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/base"
	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// Config says where and how to pull from.
type Config struct {
	// URL is rtsp:// or rtsps://; credentials in it are used unless User is set.
	URL string
	// User and Password answer the server's basic or digest authentication.
	User, Password string
	// Transport is "udp", "tcp" (interleaved in the RTSP connection) or "" (UDP, then TCP if
	// no UDP packet arrives).
	Transport string
	// ReconnectDelay is the wait before a new session after the server went away (default 5 s,
	// Janus's rtsp_reconnect_delay).
	ReconnectDelay time.Duration
	// Timeout bounds each RTSP exchange and the silence of a session before it is considered
	// gone (default 10 s).
	Timeout time.Duration
	// AudioPT and VideoPT, if not 0, are the payload types the tracks' packets carry (Janus's
	// audiopt/videopt); otherwise the server's, from the SDP.
	AudioPT, VideoPT uint8
	// Log receives reconnections and codec changes (nil: discarded).
	Log *slog.Logger
}

// Defaults of Config's durations.
const (
	DefaultReconnectDelay = 5 * time.Second
	DefaultTimeout        = 10 * time.Second
)

// State is where a source is in its life.
type State string

// The states of a source.
const (
	Playing      State = "playing"      // a session is up
	Reconnecting State = "reconnecting" // the server went away; a new session is being set up
	Closed       State = "closed"
)

// Stats count a source's sessions and packets.
type Stats struct {
	// Connects counts sessions that reached PLAY (the first included); Disconnects, sessions
	// that ended other than by Close; Packets, RTP packets forwarded to the tracks.
	Connects, Disconnects, Packets uint64
	// Lost counts RTP packets the sessions' receivers found missing; DecodeErrors, packets
	// and RTCP the library could not decode (counted, not logged one by one); Oversize, packets
	// dropped for being larger than a Receiver's cache slot (1504 bytes).
	Lost, DecodeErrors, Oversize uint64
	// LastError is why the last session ended or the last attempt failed ("" if none).
	LastError string
}

// Source is a running RTSP pull.
type Source struct {
	cfg    Config
	u      *base.URL
	log    *slog.Logger
	tracks []*track
	pub    []source.Track

	mu      sync.Mutex
	client  *gortsplib.Client // the session playing
	pending *gortsplib.Client // a session being set up (closed by Close to cut it short)
	state   State
	last    string

	connects, disconnects, packets atomic.Uint64
	lost, decodeErrors, oversize   atomic.Uint64

	closeOnce sync.Once
	stop      chan struct{}
	done      chan struct{}
}

// Open connects to the server and returns once DESCRIBE, SETUP and PLAY succeeded, with one
// track per medium strata can forward; it fails if the server cannot be reached, refuses, does
// not have the stream or offers nothing strata can forward. The source then reconnects by itself
// until Close.
func Open(cfg Config, rc sfu.ReceiverConfig) (*Source, error) {
	u, err := parseURL(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Transport != "" && cfg.Transport != "udp" && cfg.Transport != "tcp" {
		return nil, fmt.Errorf("rtsp %s: transport %q (want udp, tcp or empty)", redact(u), cfg.Transport)
	}
	if cfg.ReconnectDelay <= 0 {
		cfg.ReconnectDelay = DefaultReconnectDelay
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	s := &Source{cfg: cfg, u: u, log: cfg.Log, stop: make(chan struct{}), done: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With("url", redact(u))
	ss, err := s.session()
	if err != nil {
		return nil, fmt.Errorf("rtsp %s: %w", redact(u), err)
	}
	for i, ch := range ss.choices {
		if pt := cfg.payloadType(ch.kind); pt != 0 {
			ch.pt = pt
		}
		t := newTrack(ch, i, rc, s.log, &s.packets, &s.oversize)
		s.tracks = append(s.tracks, t)
		s.pub = append(s.pub, t.Track)
	}
	if err := s.play(ss); err != nil {
		s.closeTracks()
		return nil, fmt.Errorf("rtsp %s: %w", redact(u), err)
	}
	go s.run(ss.c)
	return s, nil
}

// payloadType is the configured payload type of a kind of track (0: the server's).
func (c *Config) payloadType(k source.Kind) uint8 {
	if k == source.Audio {
		return c.AudioPT & 0x7f
	}
	return c.VideoPT & 0x7f
}

// parseURL checks the URL and puts the credentials into it, where gortsplib takes them from.
func parseURL(cfg Config) (*base.URL, error) {
	u, err := base.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("rtsp: bad URL %q: %w", cfg.URL, err)
	}
	if cfg.User != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	return u, nil
}

// redact is the URL without its password, for errors and logs.
func redact(u *base.URL) string { return (*url.URL)(u).Redacted() }

// session is a connected client and what it described.
type session struct {
	c       *gortsplib.Client
	base    *base.URL
	choices []choice
}

// session connects and describes the stream: the client and the media it will play.
func (s *Source) session() (*session, error) {
	c := &gortsplib.Client{
		Scheme: s.u.Scheme, Host: s.u.Host,
		ReadTimeout: s.cfg.Timeout, WriteTimeout: s.cfg.Timeout,
		// The library would log these with the standard logger, a line per event.
		OnTransportSwitch: func(err error) { s.log.Info("rtsp: transport switch", "reason", err) },
		OnPacketsLost:     func(n uint64) { s.lost.Add(n) },
		OnDecodeError:     func(error) { s.decodeErrors.Add(1) },
	}
	switch s.cfg.Transport {
	case "udp":
		p := gortsplib.ProtocolUDP
		c.Protocol = &p
	case "tcp":
		p := gortsplib.ProtocolTCP
		c.Protocol = &p
	}
	if err := c.Start(); err != nil { // no I/O yet: the connection is made by DESCRIBE
		return nil, err
	}
	s.mu.Lock()
	if s.state == Closed {
		s.mu.Unlock()
		c.Close()
		return nil, errors.New("closed")
	}
	s.pending = c
	s.mu.Unlock()
	desc, _, err := c.Describe(s.u)
	if err != nil {
		c.Close()
		return nil, explain(err)
	}
	var choices []choice
	var skipped []string
	for _, m := range desc.Medias {
		if ch, ok := choose(m); ok {
			choices = append(choices, ch)
		} else if !m.IsBackChannel {
			skipped = append(skipped, mediaCodecs(m))
		}
	}
	if len(s.tracks) == 0 { // the first session: say what is left out
		if len(choices) == 0 {
			c.Close()
			return nil, fmt.Errorf("no medium strata can forward (the server offers %s)", strings.Join(skipped, ", "))
		}
		if len(skipped) > 0 {
			s.log.Warn("rtsp: media left out, strata forwards H.264, VP8, VP9, AV1, Opus and G.711", "codecs", skipped)
		}
	}
	return &session{c: c, base: desc.BaseURL, choices: choices}, nil
}

// mediaCodecs names a medium's formats for messages.
func mediaCodecs(m *description.Media) string {
	var names []string
	for _, f := range m.Formats {
		names = append(names, formatName(f))
	}
	return string(m.Type) + " " + strings.Join(names, "/")
}

// formatName names a format by its rtpmap, or its payload type if it has none.
func formatName(f format.Format) string {
	if m := f.RTPMap(); m != "" {
		return m
	}
	return fmt.Sprintf("payload type %d", f.PayloadType())
}

// explain makes gortsplib's errors for the usual refusals plain.
func explain(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "401"):
		return fmt.Errorf("the server refused the credentials (401 Unauthorized): %w", err)
	case strings.Contains(msg, "404"):
		return fmt.Errorf("the server has no such stream (404 Not Found): %w", err)
	}
	return err
}

// play sets up the media matched to the tracks (by position: a session's n-th forwardable
// medium feeds the n-th track), wires their packets and starts playing.
func (s *Source) play(ss *session) error {
	c, choices := ss.c, ss.choices
	pli := func(m *description.Media, ssrc uint32) {
		_ = c.WritePacketRTCP(m, &rtcp.PictureLossIndication{MediaSSRC: ssrc})
	}
	for i, t := range s.tracks {
		if i >= len(choices) {
			t.attach(nil, nil)
			continue
		}
		ch := choices[i]
		t.attach(&ch, pli)
		if t.silent.Load() {
			continue
		}
		if _, err := c.Setup(ss.base, ch.medi, 0, 0); err != nil {
			c.Close()
			return explain(err)
		}
		c.OnPacketRTP(ch.medi, ch.forma, t.write)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stop:
		c.Close()
		return errors.New("closed")
	default:
	}
	if _, err := c.Play(nil); err != nil {
		c.Close()
		return explain(err)
	}
	s.client, s.pending, s.state = c, nil, Playing
	s.connects.Add(1)
	return nil
}

// run waits for the session to end and sets up the next one, until Close.
func (s *Source) run(c *gortsplib.Client) {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		err := c.Wait()
		for _, t := range s.tracks {
			t.attach(nil, nil) // no keyframe requests into a finished session
		}
		if s.stopped() {
			return
		}
		s.disconnects.Add(1)
		s.setState(Reconnecting, err)
		s.log.Warn("rtsp: the session ended; reconnecting", "error", err, "delay", s.cfg.ReconnectDelay)
		for {
			timer.Reset(s.cfg.ReconnectDelay)
			select {
			case <-s.stop:
				return
			case <-timer.C:
			}
			if c, err = s.reconnect(); err == nil {
				s.log.Info("rtsp: reconnected")
				break
			}
			if s.stopped() {
				return
			}
			s.setState(Reconnecting, err)
			s.log.Warn("rtsp: reconnecting failed", "error", err)
		}
	}
}

// reconnect sets up a new session for the existing tracks.
func (s *Source) reconnect() (*gortsplib.Client, error) {
	ss, err := s.session()
	if err != nil {
		return nil, err
	}
	if err := s.play(ss); err != nil {
		return nil, err
	}
	return ss.c, nil
}

func (s *Source) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *Source) setState(st State, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == Closed {
		return
	}
	s.state = st
	if err != nil {
		s.last = err.Error()
	}
}

// Tracks are the source's tracks, fixed at Open.
func (s *Source) Tracks() []source.Track { return s.pub }

// State is where the source is: playing, reconnecting or closed.
func (s *Source) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Stats returns the counters.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	return Stats{
		Connects: s.connects.Load(), Disconnects: s.disconnects.Load(), Packets: s.packets.Load(),
		Lost: s.lost.Load(), DecodeErrors: s.decodeErrors.Load(), Oversize: s.oversize.Load(), LastError: last,
	}
}

// Close ends the session (or a reconnection under way) and closes the tracks' Receivers. It may
// be called more than once.
func (s *Source) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		close(s.stop)
		s.state = Closed
		c, p := s.client, s.pending
		s.mu.Unlock()
		c.Close()
		if p != nil {
			p.Close()
		}
		<-s.done
		s.closeTracks()
	})
	return nil
}

func (s *Source) closeTracks() {
	for _, t := range s.tracks {
		t.attach(nil, nil)
		t.Recv.Close()
	}
}
