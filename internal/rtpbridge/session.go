package rtpbridge

import (
	"context"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer"
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
type Session struct {
	cfg  Config
	opts Options
	p    *peer.Peer

	mu     sync.Mutex
	closed bool
	onDTMF func(digit string, duration time.Duration)
}

// New prepares a bridge on p, which must have been created with peer.WithBridgeCodecs() (G.722
// and telephone-event towards the browser) and should not be negotiated by anyone else. No
// socket is opened before the first description.
func New(cfg Config, p *peer.Peer, opts Options) (*Session, error) {
	if opts.SRTPProfile == "" {
		opts.SRTPProfile = ProfileAES80
	}
	if opts.StreamID == "" {
		opts.StreamID = "strata-bridge"
	}
	return &Session{cfg: cfg, opts: opts, p: p}, nil
}

// FromWebRTC applies the browser's description (an offer, or the answer to a jsep FromPlain
// returned) to the PeerConnection and returns the plain SDP: an offer with the browser's codecs
// that the bridge can carry (with SDES a=crypto as Options.SRTP asks), or the answer to the plain
// peer's offer. The answer to a browser's offer is made later, by FromPlain with the plain answer.
func (s *Session) FromWebRTC(ctx context.Context, jsep webrtc.SessionDescription) (plainSDP string, err error) {
	return "", errNotYet
}

// FromPlain applies the plain peer's SDP: an offer returns the jsep offer for the browser (its
// codecs restricted to the one the plain peer wants per medium), an answer returns the jsep answer
// to the browser's pending offer — or nil when the answer is to a plain re-offer (Hold) that the
// browser need not hear about. Errors wrap ErrMalformedSDP, ErrNoCodec, ErrBadCrypto or ErrState;
// the session is then unchanged.
func (s *Session) FromPlain(ctx context.Context, sdp string, typ webrtc.SDPType) (jsep *webrtc.SessionDescription, err error) {
	return nil, errNotYet
}

// Hold returns a plain re-offer with dir on every m-line (SendOnly, or RecvOnly/Inactive as
// Janus's SIP "hold" takes them; SendRecv resumes). Its answer goes to FromPlain. While held, the
// browser's media is still sent only when dir allows it.
func (s *Session) Hold(dir Direction) (plainSDP string, err error) {
	return "", errNotYet
}

// LocalSDP is the plain SDP strata last produced ("" before any).
func (s *Session) LocalSDP() string { return "" }

// SendDTMF sends digits (0-9, *, #, A-D; ',' pauses 500 ms) to the plain peer as RFC 4733
// telephone-events, each lasting duration (Janus's default 100 ms when 0), with the 50 ms gaps
// Janus leaves. It returns once the digits are queued; they are sent in the background.
// ErrNoCodec: the plain peer did not negotiate telephone-event.
func (s *Session) SendDTMF(digits string, duration time.Duration) error {
	return errNotYet
}

// OnDTMF installs the handler of the RFC 4733 telephone-events the plain peer sends: one call per
// digit, at its end, with its duration. Set it before negotiating; f must not block.
func (s *Session) OnDTMF(f func(digit string, duration time.Duration)) {
	s.mu.Lock()
	s.onDTMF = f
	s.mu.Unlock()
}

// RequestKeyframe asks both senders of video for a keyframe: PLI to the browser, FIR (and PLI) to
// the plain peer.
func (s *Session) RequestKeyframe() {}

// Receivers returns the bridge's tracks (for recordings, record.Participant): what the browser
// sends (the "user" side in Janus's NoSIP/SIP recordings) and what the plain peer sends ("peer").
func (s *Session) Receivers() (fromBrowser, fromPlain []Track) { return nil, nil }

// Stats returns the counters of both directions of each medium.
func (s *Session) Stats() Stats { return Stats{} }

// Close stops the media, closes the sockets and releases the ports. The PeerConnection is the
// caller's and stays open. Close is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}
