package peer

// Receiving RTP streams that Pion does not receive itself.
//
// In Unified Plan, Pion receives one media stream per m-line (with its RTX stream), or the RID
// simulcast layers it can identify by their RID header extension. SSRC simulcast (one m-line with
// a=ssrc-group:SIM and one SSRC per layer, no RID) does not fit: Pion refuses a description with
// several media SSRCs in one m-line as Plan B. The videoroom therefore shows Pion the offer with the
// base layer only and receives the upper layers here.
//
// Packets of an SSRC nobody has opened go to Pion's handler of undeclared SSRCs first. That handler
// peeks at the stream's first packet, which it stores in the SRTP stream without a lock, fails to
// place the stream and logs "Incoming unhandled RTP ssrc(…)". Reading the stream before that log line
// would race with the peek, and opening it before its first packet would be a race too (the packet
// can always win). So ReceiveSSRC claims the SSRC, waits for Pion's log line about it (which is then
// kept out of the error log: it is expected) and only then opens the stream.

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pion/interceptor"
	"github.com/pion/logging"
	"github.com/pion/webrtc/v4"
)

// Pion's log formats for RTP and RTCP on SSRCs it does not handle (webrtc v4 constants.go and
// peerconnection.go). ReceiveSSRC depends on the first: a test fails if Pion changes it.
const (
	pionUnhandledRTP  = "Incoming unhandled RTP ssrc(%d), OnTrack will not be fired. %v"
	pionUnhandledRTCP = "Incoming unhandled RTCP ssrc(%d), OnTrack will not be fired"
)

// maxHeaderExtensionID is the highest extension id ReceiveSSRC can give its receiver (Pion assigns
// ids 1–14 to the extensions of a MediaEngine that has not negotiated).
const maxHeaderExtensionID = 14

// maxUnclaimed bounds how many SSRCs Pion gave up on before anyone claimed them are remembered.
const maxUnclaimed = 256

// ssrcClaims are the SSRCs a Peer receives with ReceiveSSRC.
type ssrcClaims struct {
	mu       sync.Mutex
	released map[uint32]chan struct{} // closed once Pion has given up on the SSRC
	// unclaimed are SSRCs Pion gave up on before they were claimed (claims normally come first:
	// they are made while negotiating, before the remote peer can send on the SSRC).
	unclaimed map[uint32]bool
}

// claim registers ssrc and returns the channel closed when Pion has given up on it.
func (c *ssrcClaims) claim(ssrc uint32) (<-chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released == nil {
		c.released = map[uint32]chan struct{}{}
	}
	if _, ok := c.released[ssrc]; ok {
		return nil, fmt.Errorf("peer: SSRC %d is already received", ssrc)
	}
	ch := make(chan struct{})
	c.released[ssrc] = ch
	if c.unclaimed[ssrc] {
		delete(c.unclaimed, ssrc)
		close(ch)
	}
	return ch, nil
}

// release marks ssrc as given up by Pion; it reports whether the SSRC is claimed.
func (c *ssrcClaims) release(ssrc uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.released[ssrc]
	if !ok {
		if c.unclaimed == nil {
			c.unclaimed = map[uint32]bool{}
		}
		if len(c.unclaimed) < maxUnclaimed {
			c.unclaimed[ssrc] = true
		}
		return false
	}
	select {
	case <-ch:
	default:
		close(ch)
	}
	return true
}

func (c *ssrcClaims) claimed(ssrc uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.released[ssrc]
	return ok
}

// ReceiveSSRC receives the RTP stream ssrc of the m-line whose receiver is like, a stream the remote
// description given to Pion does not declare (it must not: Pion would claim it). Once the stream's
// first packet has arrived and Pion has given up on it, a receiver with like's codecs and header
// extensions reads it through this PeerConnection's interceptors (NACK, reports, TWCC feedback,
// statistics), and onTrack gets its track, which must then be read until it fails. With repair set
// the stream is an RTX stream: it is received as such (no NACKs for its own sequence numbers) and
// its packets come out still encapsulated. The receiver stops when the Peer closes.
func (p *Peer) ReceiveSSRC(like *webrtc.RTPReceiver, ssrc uint32, repair bool, onTrack func(*webrtc.TrackRemote)) error {
	if like == nil || ssrc == 0 || onTrack == nil {
		return errors.New("peer: ReceiveSSRC needs a receiver, an SSRC and a track handler")
	}
	if p.isClosed() {
		return ErrClosed
	}
	api, kind, err := p.mirrorAPI(like, repair)
	if err != nil {
		return err
	}
	released, err := p.claims.claim(ssrc)
	if err != nil {
		return err
	}
	go func() {
		select {
		case <-released:
		case <-p.closed:
			return
		}
		r, err := api.NewRTPReceiver(kind, like.Transport())
		if err == nil {
			err = r.Receive(webrtc.RTPReceiveParameters{Encodings: []webrtc.RTPDecodingParameters{
				{RTPCodingParameters: webrtc.RTPCodingParameters{SSRC: webrtc.SSRC(ssrc)}},
			}})
		}
		if err != nil {
			if !p.isClosed() {
				p.log.Warn("receiving an SSRC Pion does not receive", "ssrc", ssrc, "err", err)
			}
			return
		}
		p.checkMirrored(like, r, ssrc)
		go readReceiverRTCP(r, "")
		onTrack(r.Track())
		<-p.closed
		_ = r.Stop()
	}()
	return nil
}

// mirrorAPI builds a Pion API whose receivers see what like's transceiver negotiated: the same
// codecs (for repair, the RTX codec first and without feedback, as Pion receives RTX) and the same
// header extension ids. A MediaEngine that has not negotiated gives its extensions the ids 1, 2, …
// in registration order, so gaps are filled with placeholders. The receiver's streams are bound to
// the PeerConnection's own interceptors through like's DTLS transport; the API's are never used.
func (p *Peer) mirrorAPI(like *webrtc.RTPReceiver, repair bool) (*webrtc.API, webrtc.RTPCodecType, error) {
	params := like.GetParameters()
	if len(params.Codecs) == 0 {
		return nil, 0, errors.New("peer: the receiver has no codecs")
	}
	kind := webrtc.RTPCodecTypeVideo
	if strings.HasPrefix(strings.ToLower(params.Codecs[0].MimeType), "audio/") {
		kind = webrtc.RTPCodecTypeAudio
	}
	codecs := params.Codecs
	if repair {
		codecs = nil
		for _, c := range params.Codecs {
			if strings.EqualFold(c.MimeType, webrtc.MimeTypeRTX) {
				c.RTCPFeedback = nil
				codecs = append([]webrtc.RTPCodecParameters{c}, codecs...)
			} else {
				codecs = append(codecs, c)
			}
		}
		if !strings.EqualFold(codecs[0].MimeType, webrtc.MimeTypeRTX) {
			return nil, 0, errors.New("peer: no RTX codec negotiated for a repair stream")
		}
	}
	me := &webrtc.MediaEngine{}
	for _, c := range codecs {
		if err := me.RegisterCodec(c, kind); err != nil {
			return nil, 0, fmt.Errorf("peer: mirroring codec %s: %w", c.MimeType, err)
		}
	}
	uris := map[int]string{}
	top := 0
	for _, e := range params.HeaderExtensions {
		if e.ID >= 1 && e.ID <= maxHeaderExtensionID {
			uris[e.ID] = e.URI
			top = max(top, e.ID)
		}
	}
	for id := 1; id <= top; id++ {
		uri, ok := uris[id]
		if !ok {
			uri = fmt.Sprintf("urn:strata:unused-extension-id:%d", id)
		}
		if err := me.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: uri}, kind); err != nil {
			return nil, 0, fmt.Errorf("peer: mirroring header extension %s: %w", uri, err)
		}
	}
	// An empty registry: NewAPI would otherwise register Pion's default interceptors, adding their
	// feedback (NACK) to every codec of me, RTX included.
	api := webrtc.NewAPI(webrtc.WithSettingEngine(p.engine), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(&interceptor.Registry{}))
	return api, kind, nil
}

// checkMirrored warns when the receiver r does not see an extension like negotiated (an id above
// 14): its interceptors then miss it, e.g. no transport-wide feedback for the stream.
func (p *Peer) checkMirrored(like, r *webrtc.RTPReceiver, ssrc uint32) {
	got := map[string]int{}
	for _, e := range r.GetParameters().HeaderExtensions {
		got[e.URI] = e.ID
	}
	for _, e := range like.GetParameters().HeaderExtensions {
		if got[e.URI] != e.ID {
			p.log.Warn("header extension not seen on a stream Pion does not receive", "ssrc", ssrc, "uri", e.URI, "id", e.ID)
		}
	}
}

// claimLogs wraps the Peer's Pion loggers: Pion's complaint about a claimed SSRC is the signal that
// Pion is done with it (see the top of this file) and goes to the debug log.
type claimLogs struct {
	logging.LoggerFactory
	claims *ssrcClaims
}

func (f claimLogs) NewLogger(scope string) logging.LeveledLogger {
	l := f.LoggerFactory.NewLogger(scope)
	if scope != "pc" {
		return l
	}
	return claimLogger{LeveledLogger: l, claims: f.claims}
}

type claimLogger struct {
	logging.LeveledLogger
	claims *ssrcClaims
}

func (l claimLogger) Errorf(format string, args ...any) {
	if format == pionUnhandledRTP && len(args) > 0 {
		if s, ok := args[0].(webrtc.SSRC); ok && l.claims.release(uint32(s)) {
			l.Debugf(format, args...)
			return
		}
	}
	l.LeveledLogger.Errorf(format, args...)
}

func (l claimLogger) Warnf(format string, args ...any) {
	if format == pionUnhandledRTCP && len(args) > 0 {
		if s, ok := args[0].(uint32); ok && l.claims.claimed(s) {
			l.Debugf(format, args...)
			return
		}
	}
	l.LeveledLogger.Warnf(format, args...)
}
