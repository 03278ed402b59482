package streaming

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
	"github.com/strata-rtc/strata/internal/source/rtpin"
)

// opened is what an opener gives a new mountpoint: a shared source (live types), or a way to open
// one per viewer (ondemand), and the streams' descriptions.
type opened struct {
	src       source.Source
	perViewer func() (source.Source, error)
	streams   []*mpStream
	host      string
}

// opener opens the source of a mountpoint type.
type opener func(p *Plugin, c *Create) (*opened, *Error)

// openers are the mountpoint types, by create's "type".
var openers = map[string]opener{
	"rtp":      openRTP,
	"live":     openFile,
	"ondemand": openFile,
	"rtsp":     openRTSP,
}

// create opens a new mountpoint and registers it; fromConfig skips the checks Janus makes only
// for the API (admin_key was checked by the caller).
func (p *Plugin) create(c *Create, fromConfig bool) (*mountpoint, *Error) {
	if c.Permanent && !fromConfig {
		return nil, errorf(ErrUnknown, "No configuration file, can't create permanent mountpoint")
	}
	p.mu.Lock()
	id := c.ID
	if id == 0 {
		for id == 0 || p.taken(id) {
			id = rand.Uint64N(1<<53-1) + 1 // Janus's ids fit a JavaScript number
		}
	} else if p.taken(id) {
		p.mu.Unlock()
		return nil, errorf(ErrCantCreate, "A stream with the provided ID already exists")
	}
	p.mps[id] = nil // reserved while the source opens
	p.mu.Unlock()
	mp, err := p.open(id, c)
	p.mu.Lock()
	if err != nil {
		delete(p.mps, id)
	} else {
		p.mps[id] = mp
	}
	p.mu.Unlock()
	return mp, err
}

// taken reports whether id names a mountpoint, this node's (or one being opened) or another
// node's (p.mu held).
func (p *Plugin) taken(id uint64) bool {
	_, local := p.mps[id]
	return local || p.remote[id] != nil
}

// open builds the mountpoint of c under id.
func (p *Plugin) open(id uint64, c *Create) (*mountpoint, *Error) {
	open, ok := openers[c.Type]
	if !ok {
		return nil, errorf(ErrInvalid, "Unknown stream type '%s'...\n", c.Type)
	}
	o, err := open(p, c)
	if err != nil {
		return nil, err
	}
	mp := &mountpoint{
		p: p, id: id, kind: c.Type, host: o.host, src: o.src, perViewer: o.perViewer, streams: o.streams,
		enabled: true, isPrivate: c.IsPrivate, viewers: map[*session]struct{}{}, madeAt: sfu.Now(),
	}
	mp.name = mountName(c.Type, id, c.MountName)
	mp.description = mp.name
	if c.Description != nil {
		mp.description = *c.Description
	}
	if c.Metadata != nil {
		mp.metadata = *c.Metadata
	}
	if c.Secret != nil {
		mp.secret = *c.Secret
	}
	if c.PIN != nil {
		mp.pin = *c.PIN
	}
	if c.RTP != nil {
		mp.legacy = c.RTP.legacy
	}
	if c.File != nil {
		mp.filename = c.File.Filename
	}
	mp.rtsp = c.RTSP
	return mp, nil
}

// openRTP opens an rtp mountpoint's ports.
func openRTP(p *Plugin, c *Create) (*opened, *Error) {
	if c.RTP.SRTPSuite != nil || c.RTP.SRTPCrypto != nil {
		return nil, errorf(ErrCantCreate, "Can't add 'rtp' stream, SRTP input is not supported by this server")
	}
	cfg := rtpin.Config{ID: fmt.Sprintf("streaming/%d", c.ID), Host: p.cfg.Host, Log: p.log}
	for _, m := range c.RTP.Media {
		codec := media.CodecByName(m.Codec)
		if m.Type != "data" && codec == media.CodecUnknown {
			return nil, errorf(ErrCantCreate, "Can't add 'rtp' stream, unsupported codec '%s' for %s stream '%s'", m.Codec, m.Type, m.MID)
		}
		if m.Type == "video" && m.SVC && !codec.SVC() {
			return nil, errorf(ErrCantCreate, "Can't add 'rtp' stream, SVC needs VP9 or AV1 (stream '%s')", m.MID)
		}
		cfg.Streams = append(cfg.Streams, rtpin.Stream{
			Kind: source.Kind(m.Type), MID: m.MID, Label: m.Label, Codec: codec, PT: uint8(m.PT), Fmtp: m.FMTP,
			Iface: m.Iface, Mcast: m.Mcast, Port: m.Port, Port2: m.Port2, Port3: m.Port3, Simulcast: m.Simulcast,
			RTCP: m.RTCPPort > 0 || m.hasRTCP, RTCPPort: m.RTCPPort, TextData: m.TextData, BufferMsg: m.BufferMsg,
		})
	}
	src, err := rtpin.Open(cfg, p.receiverConfig())
	if err != nil {
		return nil, errorf(ErrCantCreate, "Can't add 'rtp' stream, error creating the source (%v)", err)
	}
	o := &opened{src: src, host: p.cfg.Host}
	ports := src.Ports()
	for i, t := range src.Tracks() {
		m := c.RTP.Media[i]
		label := m.Label
		if label == "" {
			label = m.Type
		}
		st := &mpStream{
			kind: t.Kind, mid: t.MID, label: label, msid: m.MSID, codec: t.Codec, codecName: t.Codec.String(),
			pt: m.PT, fmtp: m.FMTP, simulcast: m.Simulcast && t.Kind == source.Video, svc: m.SVC,
			skew: m.Skew, bufferKF: m.BufferKF, ports: ports[i], hasPorts: true, hasRTCP: ports[i].RTCP != 0,
			recv: t.Recv, data: src.Data(t.MID),
		}
		o.streams = append(o.streams, st)
	}
	return o, nil
}

// mountName is the name Janus gives a mountpoint: "mp-<id>" without one (an RTSP mountpoint: its
// id), and "mp-" before a name that C's atoi reads as a number other than 0 (for RTSP also one that
// starts with "0"), since names may not start with a number.
func mountName(kind string, id uint64, name *string) string {
	switch {
	case name == nil && kind == "rtsp":
		return strconv.FormatUint(id, 10)
	case name == nil:
		return "mp-" + strconv.FormatUint(id, 10)
	case atoiNonZero(*name) || kind == "rtsp" && strings.HasPrefix(*name, "0"):
		return "mp-" + *name
	}
	return *name
}

// atoiNonZero reports whether C's atoi reads s as a number other than 0: after blanks and a sign,
// a run of digits with one that is not 0.
func atoiNonZero(s string) bool {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
		if c != '0' {
			return true
		}
	}
	return false
}
