package rtpbridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
)

// browserOffer applies the browser's offer and offers the plain peer the formats it can carry:
// all of the browser's the first time, the negotiated codec on a re-offer.
func (s *Session) browserOffer(jsep webrtc.SessionDescription) (string, error) {
	if err := s.p.SetOffer(jsep); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformedSDP, err)
	}
	s.mu.Lock()
	legs := s.legs
	s.mu.Unlock()
	if len(legs) == 0 {
		var err error
		if legs, err = s.legsForBrowser(); err != nil {
			return "", err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.legs, s.state = legs, stateBrowserOffered
	return s.offerLocked(s.hold), nil
}

// legsForBrowser opens a leg for the first audio and the first video m-line of the browser's
// offer that have a format the bridge carries.
func (s *Session) legsForBrowser() ([]*leg, error) {
	var legs []*leg
	have := map[webrtc.RTPCodecType]bool{}
	for _, t := range s.p.PC.GetTransceivers() {
		kind := t.Kind()
		if (kind != webrtc.RTPCodecTypeAudio && kind != webrtc.RTPCodecTypeVideo) || t.Mid() == "" || have[kind] {
			continue
		}
		formats := media.BridgeFormats(t.Receiver().GetParameters().Codecs)
		if _, _, ok := media.ChooseBridgeCodec(formats, nil); !ok {
			continue
		}
		l, err := newLeg(s, kind)
		if err != nil {
			closeLegs(legs)
			return nil, err
		}
		l.tr, l.offered, l.mline = t, formats, len(legs)
		legs = append(legs, l)
		have[kind] = true
	}
	if len(legs) == 0 {
		return nil, fmt.Errorf("%w: the browser offers no audio or video codec a plain peer can take", ErrNoCodec)
	}
	return legs, nil
}

// offerLocked writes strata's plain offer from the legs, with direction dir. The m-lines are
// those of the session: a leg's in its place, and those of a plain offer that no leg took,
// refused (RFC 3264 §8: a re-offer keeps every m-line).
func (s *Session) offerLocked(dir Direction) string {
	d := &media.PlainSDP{SessionID: s.sessionID, Version: s.nextVersion()}
	byLine := map[int]*leg{}
	n := len(s.legs)
	for _, l := range s.legs {
		byLine[l.mline] = l
		n = max(n, l.mline+1)
	}
	if s.remoteOffer != nil {
		n = max(n, len(s.remoteOffer.Media))
	}
	for i := range n {
		l := byLine[i]
		if l == nil {
			d.Media = append(d.Media, refusedLine(&s.remoteOffer.Media[i]))
			continue
		}
		d.Media = append(d.Media, s.offerLine(l, dir))
	}
	s.localSDP = d.Marshal(s.addr)
	return s.localSDP
}

// offerLine is a leg's m-line in strata's offer.
func (s *Session) offerLine(l *leg, dir Direction) media.PlainMedia {
	m := media.PlainMedia{Kind: l.kind.String(), Port: l.port, RTCPPort: l.port + 1, Proto: "RTP/AVP", Direction: string(dir)}
	if l.rejected { // stays in its place, refused
		m.Port, m.Codecs = 0, l.offered[:1]
		return m
	}
	if l.out != nil { // negotiated already: the codec in use
		m.Codecs = l.plainFormats()
	} else {
		m.Codecs = l.offered
	}
	if l.local != nil {
		m.Crypto = []media.SDESCrypto{*l.local}
		if s.opts.SRTP == SRTPMandatory {
			m.Proto = "RTP/SAVP"
		}
	}
	return m
}

// refusedLine is an m-line strata does not take, answered or re-offered with port 0.
func refusedLine(m *media.PlainMedia) media.PlainMedia {
	r := media.PlainMedia{Kind: m.Kind, Proto: m.Proto}
	if len(m.Codecs) > 0 {
		r.Codecs = m.Codecs[:1]
	}
	return r
}

func (s *Session) nextVersion() uint64 {
	s.version++
	return s.version
}

// choice is what one m-line of the plain peer's SDP settles for a leg.
type choice struct {
	m            *media.PlainMedia
	plain        webrtc.RTPCodecParameters
	plainDTMF    *webrtc.RTPCodecParameters
	browser      webrtc.RTPCodecParameters
	browserDTMF  *webrtc.RTPCodecParameters
	remoteCrypto *media.SDESCrypto
	rejected     bool // the plain peer refused the m-line (port 0)
}

// plainAnswer applies the plain peer's answer to strata's offer and answers the browser.
func (s *Session) plainAnswer(ctx context.Context, d *media.PlainSDP) (*webrtc.SessionDescription, error) {
	s.mu.Lock()
	legs := s.legs
	s.mu.Unlock()
	if len(d.Media) != len(legs) {
		return nil, fmt.Errorf("%w: %d m-lines answer %d", ErrMalformedSDP, len(d.Media), len(legs))
	}
	choices := make([]choice, len(legs))
	accepted := 0
	for i, l := range legs {
		c, err := s.chooseFromAnswer(l, &d.Media[i])
		if err != nil {
			return nil, err
		}
		if !c.rejected {
			accepted++
		}
		choices[i] = c
	}
	if accepted == 0 {
		return nil, fmt.Errorf("%w: the plain peer rejected every m-line", ErrNoCodec)
	}
	for i, l := range legs {
		if choices[i].rejected {
			continue
		}
		if err := l.apply(&choices[i]); err != nil {
			return nil, err
		}
	}
	answer, err := s.p.AnswerOffer(ctx, peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		for i, l := range legs {
			if choices[i].rejected {
				l.rejected = true
				if err := l.tr.Stop(); err != nil { // answered with port 0
					return err
				}
				continue
			}
			if err := l.attach(pc, &choices[i]); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		return nil, fmt.Errorf("%w: answering the browser: %v", ErrMalformedSDP, err)
	}
	s.established(legs)
	return &answer, nil
}

// chooseFromAnswer checks one m-line of the plain answer against what strata offered.
func (s *Session) chooseFromAnswer(l *leg, m *media.PlainMedia) (choice, error) {
	if m.Kind != l.kind.String() {
		return choice{}, fmt.Errorf("%w: a %s m-line answers %s", ErrMalformedSDP, m.Kind, l.kind)
	}
	offered := l.offered
	if l.out != nil {
		offered = []webrtc.RTPCodecParameters{l.browserCodec}
	}
	if m.Port == 0 && l.out == nil {
		return choice{m: m, rejected: true}, nil // e.g. an audio-only phone refusing video
	}
	plain, dtmf, ok := media.ChooseBridgeCodec(m.Codecs, offered)
	if m.Port == 0 || !ok {
		return choice{}, fmt.Errorf("%w: the plain peer's %s answer has none of the offered formats", ErrNoCodec, m.Kind)
	}
	c := choice{m: m, plain: plain, plainDTMF: dtmf}
	c.browser, _ = media.FindFormat(l.offered, plain.RTPCodecCapability)
	if dtmf != nil {
		if b, ok := media.FindFormat(l.offered, dtmf.RTPCodecCapability); ok {
			c.browserDTMF = &b
		}
	}
	if len(m.Crypto) > 0 && l.local != nil {
		c.remoteCrypto = &m.Crypto[0]
	}
	if c.remoteCrypto == nil && (s.opts.SRTP == SRTPMandatory || m.Secure()) {
		return choice{}, fmt.Errorf("%w: the plain peer's answer has no usable a=crypto", ErrBadCrypto)
	}
	return c, nil
}

// plainOffer applies the plain peer's offer (first or re-offer) and offers the browser.
func (s *Session) plainOffer(ctx context.Context, d *media.PlainSDP) (*webrtc.SessionDescription, error) {
	s.mu.Lock()
	legs := s.legs
	s.mu.Unlock()
	var err error
	if len(legs) == 0 {
		legs, err = s.legsForPlain(d)
	} else {
		err = s.reofferedByPlain(legs, d)
	}
	if err != nil {
		return nil, err
	}
	offer, err := s.p.Offer(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: offering the browser: %v", ErrState, err)
	}
	s.mu.Lock()
	s.legs, s.remoteOffer, s.state = legs, d, statePlainOffered
	s.mu.Unlock()
	return &offer, nil
}

// legsForPlain opens a leg for the first audio and the first video m-line of the plain offer
// that have a format the bridge carries, each with a transceiver that sends the browser that
// codec alone (and telephone-event).
func (s *Session) legsForPlain(d *media.PlainSDP) ([]*leg, error) {
	choices := map[int]choice{}
	have := map[string]bool{}
	for i := range d.Media {
		m := &d.Media[i]
		if m.Port == 0 || (m.Kind != "audio" && m.Kind != "video") || have[m.Kind] {
			continue
		}
		c, err := s.chooseFromOffer(m)
		if err != nil {
			return nil, err
		}
		if c.m != nil {
			choices[i], have[m.Kind] = c, true
		}
	}
	if len(choices) == 0 {
		return nil, fmt.Errorf("%w: the plain offer has no audio or video format the bridge carries", ErrNoCodec)
	}
	var legs []*leg
	for i := range d.Media {
		c, ok := choices[i]
		if !ok {
			continue
		}
		l, err := s.legForPlain(i, &c)
		if errors.Is(err, errNotForBrowser) {
			continue // this m-line is rejected; the others may still make a call
		}
		if err != nil {
			closeLegs(legs)
			return nil, err
		}
		legs = append(legs, l)
	}
	if len(legs) == 0 {
		return nil, fmt.Errorf("%w: none of the plain offer's formats is one strata offers browsers", ErrNoCodec)
	}
	return legs, nil
}

func (s *Session) legForPlain(mline int, c *choice) (*leg, error) {
	kind := webrtc.NewRTPCodecType(c.m.Kind)
	l, err := newLeg(s, kind)
	if err != nil {
		return nil, err
	}
	l.mline = mline
	if c.remoteCrypto != nil {
		l.local = newKey(c.remoteCrypto.Tag, c.remoteCrypto.Suite)
	} else {
		l.local = nil
	}
	tr, err := s.p.PC.AddTransceiverFromKind(kind, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly})
	if err == nil {
		l.tr = tr
		err = browserFormats(tr.Receiver().GetParameters().Codecs, c)
	}
	if err == nil {
		err = l.apply(c)
	}
	if err == nil {
		err = l.attach(s.p.PC, c)
	}
	if err != nil {
		l.stop()
		if errors.Is(err, errNotForBrowser) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrNoCodec, err)
	}
	return l, nil
}

// chooseFromOffer picks the format of a plain offer's m-line (the peer's first that the bridge
// carries) and its crypto; c.m is nil when the line has no such format.
func (s *Session) chooseFromOffer(m *media.PlainMedia) (choice, error) {
	plain, dtmf, ok := media.ChooseBridgeCodec(m.Codecs, nil)
	if !ok {
		return choice{}, nil
	}
	c := choice{m: m, plain: plain, plainDTMF: dtmf, browser: plain, browserDTMF: dtmf}
	if len(m.Crypto) > 0 {
		c.remoteCrypto = &m.Crypto[0]
	}
	if c.remoteCrypto == nil && (s.opts.SRTP == SRTPMandatory || m.Secure()) {
		return choice{}, fmt.Errorf("%w: the plain offer's %s m-line has no usable a=crypto", ErrBadCrypto, m.Kind)
	}
	return c, nil
}

// errNotForBrowser: the plain peer's format is not one the PeerConnection has (an H.264 profile
// or packetization mode browsers are not offered).
var errNotForBrowser = errors.New("not a format strata offers browsers")

// browserFormats finds the plain peer's formats among the PeerConnection's own (with their
// payload types and RTCP feedback, which the browser is offered).
func browserFormats(engine []webrtc.RTPCodecParameters, c *choice) error {
	b, ok := media.FindFormat(engine, c.plain.RTPCodecCapability)
	if !ok {
		return fmt.Errorf("%w: %s", errNotForBrowser, c.plain.MimeType)
	}
	c.browser, c.browserDTMF = b, nil
	if c.plainDTMF != nil {
		if d, ok := media.FindFormat(engine, c.plainDTMF.RTPCodecCapability); ok {
			c.browserDTMF = &d
		}
	}
	return nil
}

// reofferedByPlain applies a re-offer to the existing legs: new addresses, direction, keys.
func (s *Session) reofferedByPlain(legs []*leg, d *media.PlainSDP) error {
	for _, l := range legs {
		if l.mline >= len(d.Media) || d.Media[l.mline].Kind != l.kind.String() {
			return fmt.Errorf("%w: the re-offer changes the m-lines", ErrMalformedSDP)
		}
		m := &d.Media[l.mline]
		if _, ok := media.FindFormat(m.Codecs, l.plainCodec.RTPCodecCapability); !ok && m.Port != 0 {
			return fmt.Errorf("%w: the re-offer drops the %s codec in use", ErrNoCodec, m.Kind)
		}
		if (m.Secure() || s.opts.SRTP == SRTPMandatory) && len(m.Crypto) == 0 {
			return fmt.Errorf("%w: the re-offer has no usable a=crypto", ErrBadCrypto)
		}
	}
	for _, l := range legs {
		m := &d.Media[l.mline]
		var remote *media.SDESCrypto
		if len(m.Crypto) > 0 && l.local != nil {
			remote = &m.Crypto[0]
		}
		l.setRemote(m)
		if err := l.setKeys(remote); err != nil {
			return err
		}
	}
	return nil
}

// browserAnswer applies the browser's answer to a plain offer and answers the plain peer.
func (s *Session) browserAnswer(jsep webrtc.SessionDescription) (string, error) {
	if err := s.p.SetAnswer(jsep); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformedSDP, err)
	}
	s.mu.Lock()
	legs, offer := s.legs, s.remoteOffer
	for _, l := range legs {
		l.learnBrowserFormats()
	}
	d := &media.PlainSDP{SessionID: s.sessionID, Version: s.nextVersion()}
	for i := range offer.Media {
		d.Media = append(d.Media, s.answerLine(legs, i, &offer.Media[i]))
	}
	s.localSDP = d.Marshal(s.addr)
	out := s.localSDP
	s.mu.Unlock()
	s.established(legs)
	return out, nil
}

// answerLine answers one m-line of the plain offer: the leg's format, or rejected.
func (s *Session) answerLine(legs []*leg, i int, m *media.PlainMedia) media.PlainMedia {
	for _, l := range legs {
		if l.mline != i {
			continue
		}
		a := media.PlainMedia{Kind: m.Kind, Port: l.port, Proto: m.Proto, RTCPPort: l.port + 1, RTCPMux: m.RTCPMux,
			Codecs: l.plainFormats(), Direction: answerDirection(m.Direction, s.hold)}
		if l.local != nil && len(m.Crypto) > 0 {
			a.Crypto = []media.SDESCrypto{*l.local}
		}
		return a
	}
	return refusedLine(m)
}

// answerDirection is the direction answering an offered one while strata's own is local.
func answerDirection(offered string, local Direction) string {
	want := media.ReverseDirection(offered)
	send := (want == "sendrecv" || want == "sendonly") && (local == SendRecv || local == SendOnly)
	recv := (want == "sendrecv" || want == "recvonly") && (local == SendRecv || local == RecvOnly)
	switch {
	case send && recv:
		return "sendrecv"
	case send:
		return "sendonly"
	case recv:
		return "recvonly"
	}
	return "inactive"
}

// Hold returns a plain re-offer with dir on every m-line (SendOnly, or RecvOnly/Inactive as
// Janus's SIP "hold" takes them; SendRecv resumes). Its answer goes to FromPlain, which returns no
// jsep for it. Media towards the plain peer stops at once when dir forbids sending.
func (s *Session) Hold(dir Direction) (plainSDP string, err error) {
	switch dir {
	case SendRecv, SendOnly, RecvOnly, Inactive:
	default:
		return "", fmt.Errorf("invalid direction %q", dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	if s.state != stateEstablished {
		return "", fmt.Errorf("%w: no established call to hold", ErrState)
	}
	s.hold, s.state = dir, stateHoldOffered
	for _, l := range s.legs {
		if l.out != nil {
			l.out.enabled.Store(dir == SendRecv || dir == SendOnly)
		}
	}
	return s.offerLocked(dir), nil
}

// holdAnswer applies the plain peer's answer to a Hold re-offer.
func (s *Session) holdAnswer(d *media.PlainSDP) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.legs {
		if l.mline >= len(d.Media) || d.Media[l.mline].Kind != l.kind.String() {
			return fmt.Errorf("%w: the answer does not have the offer's m-lines", ErrMalformedSDP)
		}
	}
	for _, l := range s.legs {
		if m := &d.Media[l.mline]; m.Port != 0 && l.out != nil {
			l.setRemote(m)
		}
	}
	s.state = stateEstablished
	return nil
}

// established starts the legs' media once both sides have negotiated.
func (s *Session) established(legs []*leg) {
	s.mu.Lock()
	s.state = stateEstablished
	hold := s.hold
	s.mu.Unlock()
	for _, l := range legs {
		if l.out == nil {
			continue // rejected
		}
		l.out.enabled.Store(hold == SendRecv || hold == SendOnly)
		l.startOnce.Do(l.start)
	}
}

func closeLegs(legs []*leg) {
	for _, l := range legs {
		l.stop()
	}
}
