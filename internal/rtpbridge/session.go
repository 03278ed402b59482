package rtpbridge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
)

// negState is where the offer/answer exchange stands.
type negState int

const (
	stateIdle           negState = iota
	stateBrowserOffered          // the browser offered; the plain peer's answer is awaited
	statePlainOffered            // the plain peer offered; the browser's answer is awaited
	stateHoldOffered             // strata re-offered to the plain peer (Hold)
	stateEstablished
)

// Session is one WebRTC PeerConnection joined to one plain-RTP peer. Its negotiation methods
// (FromWebRTC, FromPlain, Hold) are meant to be called from one goroutine (the handle's queue);
// the others are safe from any goroutine.
//
// The four flows of Janus's NoSIP demo and of a SIP call:
//
//	browser offers:  jsep offer  → FromWebRTC → plain offer  (nosip generate, SIP INVITE)
//	                 plain answer → FromPlain(answer) → jsep answer (nosip process, SIP 200 OK)
//	plain offers:    plain offer → FromPlain(offer) → jsep offer (nosip process, incoming INVITE)
//	                 jsep answer → FromWebRTC → plain answer (nosip generate, SIP 200 OK)
//
// Re-negotiations go the same ways (a re-INVITE's offer through FromPlain gives a new jsep offer,
// Janus's "updatingcall"); Hold makes a plain re-offer itself, whose answer FromPlain applies
// without a new jsep (it returns nil).
//
// When the plain peer offers, the browser is offered the first of its codecs the bridge carries
// (and telephone-event), so that both sides use the same codec without transcoding.
type Session struct {
	cfg       Config
	opts      Options
	p         *peer.Peer
	log       *slog.Logger
	addr      netip.Addr // written in the plain SDP
	sessionID uint64

	mu          sync.Mutex // guards what follows
	state       negState
	version     uint64
	legs        []*leg          // in the plain SDP's m-line order
	remoteOffer *media.PlainSDP // the plain offer being answered
	localSDP    string
	hold        Direction
	closed      bool
	onDTMF      func(digit string, duration time.Duration)

	dtmfMu sync.Mutex // one SendDTMF at a time
}

// New prepares a bridge on p, which must have been created with peer.WithBridgeCodecs() (G.722
// and telephone-event towards the browser) and should not be negotiated by anyone else; New
// installs p's track handler. No socket is opened before the first description.
func New(cfg Config, p *peer.Peer, opts Options) (*Session, error) {
	if opts.SRTPProfile == "" {
		opts.SRTPProfile = ProfileAES80
	}
	if opts.SRTPProfile != ProfileAES80 && opts.SRTPProfile != ProfileAES32 {
		return nil, fmt.Errorf("invalid srtp_profile %q (%s or %s)", opts.SRTPProfile, ProfileAES80, ProfileAES32)
	}
	if opts.StreamID == "" {
		opts.StreamID = "strata-bridge"
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.PortMin > cfg.PortMax {
		return nil, fmt.Errorf("invalid RTP port range %d-%d", cfg.PortMin, cfg.PortMax)
	}
	if _, err := bindAddr(cfg.LocalIP); err != nil {
		return nil, err
	}
	addr, err := sdpAddr(cfg)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, opts: opts, p: p, log: opts.Log, addr: addr, sessionID: uint64(randomSSRC()), hold: SendRecv}
	p.OnTrack(s.onTrack)
	return s, nil
}

// SetSRTP changes the SDES policy for the negotiations that follow (Janus's NoSIP takes "srtp"
// with every generate and process). A leg already negotiated keeps its key.
func (s *Session) SetSRTP(mode SRTPMode, profile string) error {
	if profile == "" {
		profile = ProfileAES80
	}
	if profile != ProfileAES80 && profile != ProfileAES32 {
		return fmt.Errorf("invalid srtp_profile %q", profile)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.SRTP, s.opts.SRTPProfile = mode, profile
	return nil
}

// FromWebRTC applies the browser's description (an offer, or the answer to a jsep FromPlain
// returned) to the PeerConnection and returns the plain SDP: an offer with the browser's codecs
// that the bridge can carry (with SDES a=crypto as Options.SRTP asks), or the answer to the plain
// peer's offer. The answer to a browser's offer is made later, by FromPlain with the plain answer.
func (s *Session) FromWebRTC(ctx context.Context, jsep webrtc.SessionDescription) (plainSDP string, err error) {
	state, err := s.current()
	if err != nil {
		return "", err
	}
	switch {
	case jsep.Type == webrtc.SDPTypeOffer && (state == stateIdle || state == stateEstablished):
		return s.browserOffer(jsep)
	case jsep.Type == webrtc.SDPTypeAnswer && state == statePlainOffered:
		return s.browserAnswer(jsep)
	}
	return "", fmt.Errorf("%w: a browser %s now", ErrState, jsep.Type)
}

// FromPlain applies the plain peer's SDP: an offer returns the jsep offer for the browser (its
// codecs restricted to the one the plain peer wants per medium), an answer returns the jsep answer
// to the browser's pending offer — or nil when the answer is to a plain re-offer (Hold) or
// repeats the answer of an established call (a SIP 200 OK after a 183 with SDP), which the
// browser need not hear about. Errors wrap ErrMalformedSDP, ErrNoCodec, ErrBadCrypto or ErrState.
func (s *Session) FromPlain(ctx context.Context, sdp string, typ webrtc.SDPType) (jsep *webrtc.SessionDescription, err error) {
	state, err := s.current()
	if err != nil {
		return nil, err
	}
	parsed, err := media.ParsePlainSDP(sdp)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedSDP, err)
	}
	switch {
	case typ == webrtc.SDPTypeOffer && (state == stateIdle || state == stateEstablished):
		return s.plainOffer(ctx, parsed)
	case typ == webrtc.SDPTypeAnswer && state == stateBrowserOffered:
		return s.plainAnswer(ctx, parsed)
	case typ == webrtc.SDPTypeAnswer && (state == stateHoldOffered || state == stateEstablished):
		// The answer to Hold's re-offer, or an answer again (a SIP 200 OK after a 183 with
		// the same SDP): the addresses are updated, the browser needs nothing.
		return nil, s.holdAnswer(parsed)
	}
	return nil, fmt.Errorf("%w: a plain %s now", ErrState, typ)
}

func (s *Session) current() (negState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.state, nil
}

// LocalSDP is the plain SDP strata last produced ("" before any).
func (s *Session) LocalSDP() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.localSDP
}

// SendDTMF sends digits (0-9, *, #, A-D; ',' pauses 500 ms) to the plain peer as RFC 4733
// telephone-events, each lasting duration (Janus's default 100 ms when 0), with 50 ms gaps. It
// returns once the digits are validated; they are sent in the background, one call after the
// other. ErrNoCodec: the plain peer did not negotiate telephone-event.
func (s *Session) SendDTMF(digits string, duration time.Duration) error {
	if duration == 0 {
		duration = defaultDTMFDuration
	}
	if err := checkDigits(digits, duration); err != nil {
		return err
	}
	l := s.leg(webrtc.RTPCodecTypeAudio)
	if l == nil || l.out == nil || l.plainDTMF < 0 {
		return fmt.Errorf("%w: no telephone-event negotiated with the plain peer", ErrNoCodec)
	}
	pt := uint8(l.plainDTMF)
	go func() {
		s.dtmfMu.Lock()
		defer s.dtmfMu.Unlock()
		l.playDTMF(digits, duration, pt)
	}()
	return nil
}

// OnDTMF installs the handler of the RFC 4733 telephone-events the plain peer sends: one call per
// digit, at its end, with its duration. f must not block.
func (s *Session) OnDTMF(f func(digit string, duration time.Duration)) {
	s.mu.Lock()
	s.onDTMF = f
	s.mu.Unlock()
}

// RequestKeyframe asks both senders of video for a keyframe: PLI to the browser, PLI and FIR to
// the plain peer.
func (s *Session) RequestKeyframe() { s.RequestKeyframeFrom(true, true) }

// RequestKeyframeFrom asks the browser (PLI) and/or the plain peer (PLI and FIR) for a keyframe.
func (s *Session) RequestKeyframeFrom(browser, plain bool) {
	l := s.leg(webrtc.RTPCodecTypeVideo)
	if l == nil || l.fromBrowser == nil {
		return
	}
	if browser {
		l.fromBrowser.RequestKeyframe(0, 0)
	}
	if plain {
		l.requestKeyframe()
	}
}

// Receivers returns the bridge's tracks (for recordings, record.Participant): what the browser
// sends (the "user" side in Janus's NoSIP/SIP recordings) and what the plain peer sends ("peer").
func (s *Session) Receivers() (fromBrowser, fromPlain []Track) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.legs {
		if l.fromBrowser == nil {
			continue
		}
		fromBrowser = append(fromBrowser, Track{Receiver: l.fromBrowser, Video: l.video(), Fmtp: l.browserCodec.SDPFmtpLine})
		fromPlain = append(fromPlain, Track{Receiver: l.fromPlain, Video: l.video(), Fmtp: l.plainCodec.SDPFmtpLine})
	}
	return fromBrowser, fromPlain
}

// Stats returns the counters of both directions of each medium.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st Stats
	for _, l := range s.legs {
		if l.out == nil {
			continue
		}
		ms := &st.Audio
		if l.video() {
			ms = &st.Video
		}
		rate := l.plainCodec.ClockRate
		ms.Codec = media.CodecByName(l.plainCodec.MimeType).String()
		ms.FromPlain = l.in.flow(rate)
		ms.ToPlain = FlowStats{Packets: l.out.packets.Load(), Bytes: l.out.bytes.Load(), Lost: l.reports.lost.Load()}
		if rate > 0 {
			ms.ToPlain.Jitter = float64(l.reports.jitter.Load()) * 1000 / float64(rate)
		}
		if r := l.remote.Load(); r != nil && (st.Peer == "" || !l.video()) {
			st.Peer = r.String()
		}
		st.SRTP = st.SRTP || l.inSRTP.Load() != nil
	}
	return st
}

// Close stops the media, closes the sockets and releases the ports. The PeerConnection is the
// caller's and stays open. Close is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	legs := s.legs
	s.mu.Unlock()
	for _, l := range legs {
		l.stop()
	}
	return nil
}

// leg returns the leg of a kind, nil when there is none.
func (s *Session) leg(kind webrtc.RTPCodecType) *leg {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.legs {
		if l.kind == kind {
			return l
		}
	}
	return nil
}
