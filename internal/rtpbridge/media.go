package rtpbridge

import (
	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// apply takes a leg's negotiated formats, the peer's addresses and keys, and builds the media
// path the first time: a Receiver for each side, the plainSender and the DownTrack.
func (l *leg) apply(c *choice) error {
	if l.out == nil { // a re-negotiation keeps the codec, which the reader uses unlocked
		l.plainCodec, l.browserCodec, l.plainDTMF = c.plain, c.browser, -1
		l.browserDTMF = c.browserDTMF
		if c.plainDTMF != nil {
			l.plainDTMF, l.dtmfRate = int(c.plainDTMF.PayloadType), c.plainDTMF.ClockRate
		}
		l.dtmfPT.Store(int32(l.plainDTMF))
		l.build()
		l.mapFormats()
	}
	l.setRemote(c.m)
	return l.setKeys(c.remoteCrypto)
}

// build makes the media path of the leg.
func (l *leg) build() {
	codec := media.CodecByName(l.plainCodec.MimeType)
	s := l.s
	l.fromBrowser = sfu.NewReceiver(sfu.ReceiverConfig{ID: "browser-" + l.kind.String(), Codec: codec},
		func(_ int, ssrc uint32) {
			if ssrc != 0 {
				if err := s.p.PC.WriteRTCP([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: ssrc}}); err != nil {
					s.log.Debug("writing PLI to the browser", "err", err)
				}
			}
		})
	l.out = newPlainSender(l.rtp, &l.remote, l.plainCodec.ClockRate)
	l.fromBrowser.AddSink(l.out)
	l.fromPlain = sfu.NewReceiver(sfu.ReceiverConfig{ID: "plain-" + l.kind.String(), Codec: codec},
		func(int, uint32) { l.requestKeyframe() })
	cfg := sfu.DownTrackConfig{
		ID: "strata-" + l.kind.String(), StreamID: s.opts.StreamID, Codec: l.browserCodec.RTPCodecCapability,
	}
	if l.plainDTMF >= 0 {
		ev := l.dtmfFormat().RTPCodecCapability
		cfg.Events, cfg.EventsPT = &ev, uint8(l.plainDTMF)
	}
	l.down = sfu.NewDownTrack(l.fromPlain, cfg)
}

// mapFormats tells the sender which browser payload types become which plain ones.
func (l *leg) mapFormats() {
	m := map[uint8]uint8{uint8(l.browserCodec.PayloadType): uint8(l.plainCodec.PayloadType)}
	if l.browserDTMF != nil && l.plainDTMF >= 0 {
		m[uint8(l.browserDTMF.PayloadType)] = uint8(l.plainDTMF)
	}
	l.out.setFormats(m)
}

// attach restricts the leg's transceiver to the negotiated formats and adds the DownTrack.
func (l *leg) attach(pc *webrtc.PeerConnection, c *choice) error {
	if l.tr == nil {
		for _, t := range pc.GetTransceivers() {
			if t.Kind() == l.kind && t.Mid() != "" {
				l.tr = t
				break
			}
		}
	}
	codecs := []webrtc.RTPCodecParameters{c.browser}
	if c.browserDTMF != nil {
		codecs = append(codecs, *c.browserDTMF)
	}
	if err := l.tr.SetCodecPreferences(codecs); err != nil {
		return err
	}
	if l.sender != nil {
		return nil
	}
	sender, err := pc.AddTrack(l.down)
	if err != nil {
		return err
	}
	l.sender = sender
	l.down.Start()
	go l.down.ReadRTCP(sender) // keyframe requests reach the plain peer through the Receiver's requester
	return nil
}

// learnBrowserFormats reads the payload types the browser's answer settled (strata offered the
// engine's; the browser answers with the same, but its answer is what counts).
func (l *leg) learnBrowserFormats() {
	if l.sender == nil {
		return
	}
	for _, c := range l.sender.GetParameters().Codecs {
		switch {
		case media.IsTelephoneEvent(c.RTPCodecCapability) && c.ClockRate == l.dtmfRate:
			d := c
			l.browserDTMF = &d
		case media.SameFormat(c.RTPCodecCapability, l.browserCodec.RTPCodecCapability):
			l.browserCodec = c
		}
	}
	l.mapFormats()
}

// plainFormats are the formats of the leg on the plain side: the codec and telephone-event.
func (l *leg) plainFormats() []webrtc.RTPCodecParameters {
	out := []webrtc.RTPCodecParameters{l.plainCodec}
	if l.plainDTMF >= 0 {
		out = append(out, l.dtmfFormat())
	}
	return out
}

// dtmfFormat is the plain side's telephone-event format (the leg has one).
func (l *leg) dtmfFormat() webrtc.RTPCodecParameters {
	for _, c := range l.offered {
		if media.IsTelephoneEvent(c.RTPCodecCapability) && int(c.PayloadType) == l.plainDTMF && c.ClockRate == l.dtmfRate {
			return c
		}
	}
	return webrtc.RTPCodecParameters{PayloadType: webrtc.PayloadType(l.plainDTMF),
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: media.TelephoneEvent, ClockRate: l.dtmfRate, SDPFmtpLine: "0-16"}}
}

// onTrack feeds a browser track into its leg's Receiver.
func (s *Session) onTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	s.mu.Lock()
	var l *leg
	for _, cand := range s.legs {
		if cand.tr != nil && cand.tr.Receiver() == receiver {
			l = cand
		}
	}
	s.mu.Unlock()
	if l == nil || l.fromBrowser == nil {
		go discard(track)
		return
	}
	l.fromBrowser.SetLayerSSRC(0, uint32(track.SSRC()))
	go forward(track, l.fromBrowser)
}

// forward reads a browser track into a Receiver with one buffer for every packet.
func forward(track *webrtc.TrackRemote, recv *sfu.Receiver) {
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil {
			return
		}
		recv.WriteRTP(0, buf[:n], sfu.Now())
	}
}

func discard(t *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := t.Read(buf); err != nil {
			return
		}
	}
}
