package echotest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// textPrefix is put before echoed text messages, as Janus's echotest does.
const textPrefix = "EchoTest here! You wrote: "

// codecPrefs are the codec choices a request can make for the next negotiation.
type codecPrefs struct {
	audio, video, profile string
}

// offeredLine is what the echo needs from one m-line of the offer.
type offeredLine struct {
	ridExt, repairedRidExt uint8
	// rids in the order the offer lists them.
	rids []string
}

// negotiate answers an offer, preparing one echo track per incoming audio or video m-line.
func (s *session) negotiate(ctx context.Context, jsep *plugin.JSEP) (*plugin.JSEP, error) {
	if jsep.Type != "offer" {
		return nil, &requestError{ErrInvalidSDP, fmt.Sprintf("Unexpected JSEP type %q: the echotest takes offers", jsep.Type)}
	}
	p, err := s.h.Peer()
	if err != nil {
		return nil, &requestError{ErrUnknown, "No PeerConnection: " + err.Error()}
	}
	s.mu.Lock()
	if s.peer != p {
		s.peer = p
		p.OnTrack(s.onTrack)
		p.PC.OnDataChannel(echoDataChannel)
		go s.rembLoop(p)
	}
	prefs := s.prefs
	s.mu.Unlock()
	lines := describeOffer(jsep.SDP)
	prepare := peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		return s.prepareEcho(pc, prefs, lines, jsep.RIDOrder)
	})
	answer, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP}, prepare)
	if err != nil {
		return nil, &requestError{ErrInvalidSDP, "Error parsing offer: " + err.Error()}
	}
	return &plugin.JSEP{Type: "answer", SDP: answer.SDP}, nil
}

// describeOffer reads the rid header extension ids and the simulcast rids of each m-line.
func describeOffer(s string) map[string]offeredLine {
	out := map[string]offeredLine{}
	var parsed sdp.SessionDescription
	if parsed.Unmarshal([]byte(s)) != nil {
		return out
	}
	for _, md := range parsed.MediaDescriptions {
		mid, _ := md.Attribute(sdp.AttrKeyMID)
		var line offeredLine
		for _, a := range md.Attributes {
			switch a.Key {
			case sdp.AttrKeyExtMap:
				var e sdp.ExtMap
				if e.Unmarshal("extmap:"+a.Value) != nil || e.URI == nil || e.Value <= 0 || e.Value > 255 {
					continue
				}
				switch e.URI.String() {
				case sdp.SDESRTPStreamIDURI:
					line.ridExt = uint8(e.Value)
				case sdp.SDESRepairRTPStreamIDURI:
					line.repairedRidExt = uint8(e.Value)
				}
			case "rid":
				if f := strings.Fields(a.Value); len(f) >= 2 && f[1] == "send" {
					line.rids = append(line.rids, f[0])
				}
			}
		}
		out[mid] = line
	}
	return out
}

// layerIndexes maps rids to Janus substream numbers (0 lowest … 2 highest). Offers list rids highest
// first unless the client says rid_order "lmh".
func layerIndexes(rids []string, order string) map[string]int {
	m := map[string]int{}
	n := min(len(rids), maxLayers)
	for i := range n {
		if order == "lmh" {
			m[rids[i]] = i
		} else {
			m[rids[i]] = n - 1 - i
		}
	}
	return m
}

// prepareEcho runs between applying the offer and creating the answer: each new audio or video
// transceiver gets one codec (the client's first, or the one the request asked for) and a track
// that carries the echo.
func (s *session) prepareEcho(pc *webrtc.PeerConnection, prefs codecPrefs, lines map[string]offeredLine, ridOrder string) error {
	for _, t := range pc.GetTransceivers() {
		kind := t.Kind()
		if (kind != webrtc.RTPCodecTypeAudio && kind != webrtc.RTPCodecTypeVideo) || t.Sender() != nil || t.Mid() == "" {
			continue
		}
		pref := prefs.audio
		if kind == webrtc.RTPCodecTypeVideo {
			pref = prefs.video
		}
		chosen, rtx, ok := chooseCodec(t.Receiver().GetParameters().Codecs, pref, prefs.profile)
		if !ok {
			continue
		}
		codecs := []webrtc.RTPCodecParameters{chosen}
		if rtx != nil {
			codecs = append(codecs, *rtx)
		}
		if err := t.SetCodecPreferences(codecs); err != nil {
			return fmt.Errorf("codec preferences for mid %s: %w", t.Mid(), err)
		}
		track, err := webrtc.NewTrackLocalStaticRTP(chosen.RTPCodecCapability, kind.String(), "strata-echotest")
		if err != nil {
			return err
		}
		sender, err := pc.AddTrack(track)
		if err != nil {
			return fmt.Errorf("echo track for mid %s: %w", t.Mid(), err)
		}
		line := lines[t.Mid()]
		st := newEchoStream(s, pc, t.Mid(), kind == webrtc.RTPCodecTypeVideo, chosen, track, sender, line, layerIndexes(line.rids, ridOrder))
		s.mu.Lock()
		st.setTargets(s.targets, nil)
		s.streams[t.Mid()] = st
		if st.video {
			s.videoCodec = st.codec
		} else {
			s.audioCodec = st.codec
		}
		s.mu.Unlock()
		go st.readRTCP()
	}
	return nil
}

// chooseCodec picks the first non-RTX codec (the client's preference order) matching the requested
// name and profile, with its RTX codec. An unavailable request falls back to the client's first.
func chooseCodec(codecs []webrtc.RTPCodecParameters, name, profile string) (webrtc.RTPCodecParameters, *webrtc.RTPCodecParameters, bool) {
	var chosen *webrtc.RTPCodecParameters
	var fallback *webrtc.RTPCodecParameters
	for i := range codecs {
		c := &codecs[i]
		if strings.EqualFold(c.MimeType, webrtc.MimeTypeRTX) {
			continue
		}
		if fallback == nil {
			fallback = c
		}
		if (name == "" || strings.EqualFold(codecName(c.MimeType), name)) && matchesProfile(c.SDPFmtpLine, profile) {
			chosen = c
			break
		}
	}
	if chosen == nil {
		chosen = fallback
	}
	if chosen == nil {
		return webrtc.RTPCodecParameters{}, nil, false
	}
	apt := fmt.Sprintf("apt=%d", chosen.PayloadType)
	for i := range codecs {
		if strings.EqualFold(codecs[i].MimeType, webrtc.MimeTypeRTX) && fmtpHas(codecs[i].SDPFmtpLine, apt) {
			rtx := codecs[i]
			return *chosen, &rtx, true
		}
	}
	return *chosen, nil, true
}

// matchesProfile checks videoprofile: VP9 profile-id or H.264 profile-level-id.
func matchesProfile(fmtp, profile string) bool {
	if profile == "" {
		return true
	}
	return fmtpHas(fmtp, "profile-id="+profile) || fmtpHas(fmtp, "profile-level-id="+strings.ToLower(profile))
}

func fmtpHas(fmtp, param string) bool {
	for p := range strings.SplitSeq(fmtp, ";") {
		if strings.EqualFold(strings.TrimSpace(p), param) {
			return true
		}
	}
	return false
}

func codecName(mime string) string {
	_, name, ok := strings.Cut(mime, "/")
	if !ok {
		name = mime
	}
	return strings.ToLower(name)
}

// onTrack starts echoing an incoming track (one per simulcast layer) on its m-line's echo stream.
func (s *session) onTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	s.mu.Lock()
	var st *echoStream
	if s.peer != nil {
		for _, t := range s.peer.PC.GetTransceivers() {
			if t.Receiver() == receiver {
				st = s.streams[t.Mid()]
			}
		}
	}
	s.mu.Unlock()
	if st == nil {
		go discard(track)
		return
	}
	layer := st.addSource(track.RID(), uint32(track.SSRC()))
	go st.forward(track, layer)
}

func discard(t *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := t.Read(buf); err != nil {
			return
		}
	}
}

// echoDataChannel answers every message: binary as it came, text with a prefix (as Janus).
func echoDataChannel(dc *webrtc.DataChannel) {
	dc.OnMessage(func(msg webrtc.DataChannelMessage) {
		if msg.IsString {
			_ = dc.SendText(textPrefix + string(msg.Data))
			return
		}
		_ = dc.Send(msg.Data)
	})
}

// rembLoop sends the bitrate cap to the browser every second while one is set (Janus does it when
// the browser sends its own REMB, which Chrome no longer does with transport-wide feedback).
func (s *session) rembLoop(p *peer.Peer) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-p.Closed():
			return
		case <-t.C:
			if b := s.bitrate.Load(); b > 0 {
				s.sendREMB(b)
			}
		}
	}
}

// sendREMB caps what the browser sends on each video m-line; zero lifts the cap (10 Mbit/s).
func (s *session) sendREMB(bitrate uint32) {
	if bitrate == 0 {
		bitrate = noLimit
	}
	for _, st := range s.videoStreams() {
		if ssrcs := st.sourceSSRCs(); len(ssrcs) > 0 {
			st.writeRTCP(&rtcp.ReceiverEstimatedMaximumBitrate{SenderSSRC: st.localSSRC(), Bitrate: float32(bitrate), SSRCs: ssrcs})
		}
	}
}

// requestKeyframes sends a PLI for every incoming video stream.
func (s *session) requestKeyframes() {
	for _, st := range s.videoStreams() {
		for _, ssrc := range st.sourceSSRCs() {
			st.writeRTCP(&rtcp.PictureLossIndication{SenderSSRC: st.localSSRC(), MediaSSRC: ssrc})
		}
	}
}

func (s *session) videoStreams() []*echoStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*echoStream
	for _, st := range s.streams {
		if st.video {
			out = append(out, st)
		}
	}
	return out
}
