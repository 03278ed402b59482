package recordplay

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
	"github.com/strata-rtc/strata/internal/source/mjrplay"
)

var playParams = []plugin.Param{
	{Name: "id", Kind: plugin.Positive, Required: true},
	{Name: "restart", Kind: plugin.Bool},
}

// player plays one recording to the client: an mjrplay.Source, one DownTrack per track on the
// handle's PeerConnection (strata offers, the client answers in `start`).
type player struct {
	s     *session
	rec   *recording
	src   *mjrplay.Source
	downs []*sfu.DownTrack

	mu       sync.Mutex
	answered bool
	started  bool
	closed   bool
}

// startPlay prepares the playout of a recording and offers its tracks.
func (s *session) startPlay(b plugin.Body, jsep *plugin.JSEP) (map[string]any, *plugin.JSEP, *plugin.RequestError) {
	if jsep != nil && jsep.SDP != "" {
		return nil, nil, errorf(ErrInvalidElement, "A play request can't contain an SDP")
	}
	if rerr := b.Validate(playParams...); rerr != nil {
		return nil, nil, rerr
	}
	s.mu.Lock()
	busy, playing := s.rec != nil || s.play != nil, s.play
	s.mu.Unlock()
	if b.Bool("restart") {
		if playing == nil {
			return nil, nil, errorf(ErrInvalidState, "Not a playout session, can't restart")
		}
		return playing.restart()
	}
	if busy {
		return nil, nil, errorf(ErrInvalidState, "Already recording or playing: stop first")
	}
	rec := s.p.lib.get(b.Uint("id"))
	if rec == nil {
		return nil, nil, errorf(ErrNotFound, "No such recording")
	}
	src, warning, err := s.p.lib.open(rec)
	if err != nil {
		s.log.Warn("playing a recording", "id", rec.ID, "err", err)
		return nil, nil, errorf(ErrInvalidRecording, "Error opening recording files")
	}
	pl := &player{s: s, rec: rec, src: src}
	offer, err := pl.offer()
	if err != nil {
		pl.close()
		return nil, nil, errorf(ErrUnknown, "Error creating the offer: %v", err)
	}
	s.mu.Lock()
	s.play = pl
	s.mu.Unlock()
	result := map[string]any{"status": "preparing", "id": rec.ID}
	if warning != "" {
		result["warning"] = warning
	}
	return result, offer, nil
}

// open opens a recording's files for playing. When one of two files cannot be played the other
// plays alone, with Janus's warning; when none can, the error says why.
func (l *library) open(rec *recording) (*mjrplay.Source, string, error) {
	var paths, kinds []string
	var errs []string
	for _, m := range []struct {
		kind string
		med  medium
	}{{"audio", rec.audio}, {"video", rec.video}} {
		if m.med.file == "" {
			continue
		}
		p, err := l.path(m.med.file)
		if err == nil {
			err = m.med.err
		}
		if err != nil {
			errs = append(errs, m.kind+": "+err.Error())
			continue
		}
		paths, kinds = append(paths, p), append(kinds, m.kind)
	}
	rc := sfu.ReceiverConfig{ID: fmt.Sprintf("play-%d", rec.ID)}
	if len(paths) > 0 {
		src, err := mjrplay.Open(paths, rc)
		if err == nil && len(errs) == 0 {
			return src, "", nil
		}
		if err == nil {
			return src, brokenWarning(kinds[0]), nil
		}
		errs = append(errs, err.Error())
		if len(paths) == 2 { // one of the two may play alone
			for i, p := range paths {
				if src, err := mjrplay.Open([]string{p}, rc); err == nil {
					return src, brokenWarning(kinds[i]), nil
				}
			}
		}
	}
	return nil, "", fmt.Errorf("%s", strings.Join(errs, "; "))
}

// restart offers the playout again with new ICE credentials (Janus's "restart"); the client
// answers in `start` and the playout goes on.
func (pl *player) restart() (map[string]any, *plugin.JSEP, *plugin.RequestError) {
	p, err := pl.s.h.Peer()
	if err != nil {
		return nil, nil, errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	ctx, cancel := context.WithTimeout(pl.s.q.Context(), negotiateTimeout)
	defer cancel()
	desc, err := p.Offer(ctx, peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		// This offer's credentials are new; Peer.Offer then creates the real one.
		_, err := pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
		return err
	}))
	if err != nil {
		return nil, nil, errorf(ErrUnknown, "Error creating the offer: %v", err)
	}
	return map[string]any{"status": "restarting", "id": pl.rec.ID}, &plugin.JSEP{Type: "offer", SDP: desc.SDP}, nil
}

// brokenWarning is Janus's warning when only the medium playing plays.
func brokenWarning(playing string) string {
	if playing == "audio" {
		return "Broken video file, playing audio only"
	}
	return "Broken audio file, playing video only"
}

// offer adds a sendonly transceiver per track, audio first as Janus offers, with the recording's
// codec, and makes the offer.
func (pl *player) offer() (*plugin.JSEP, error) {
	p, err := pl.s.h.Peer(peer.WithoutNACKResponder(), peer.WithSendOnly())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(pl.s.q.Context(), negotiateTimeout)
	defer cancel()
	desc, err := p.Offer(ctx, peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		for _, t := range pl.src.Tracks() {
			if err := pl.addTrack(pc, t); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return &plugin.JSEP{Type: "offer", SDP: desc.SDP}, nil
}

// addTrack sends one track of the recording through a DownTrack.
func (pl *player) addTrack(pc *webrtc.PeerConnection, t source.Track) error {
	down := sfu.NewDownTrack(t.Recv, sfu.DownTrackConfig{
		ID: "strata-" + string(t.Kind), StreamID: "strata-recordplay", Codec: media.Capability(t.Codec, t.Fmtp), RespondNACK: true,
	})
	tr, err := pc.AddTransceiverFromTrack(down, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly})
	if err != nil {
		return fmt.Errorf("%s track: %w", t.Kind, err)
	}
	codecs := tr.Sender().GetParameters().Codecs
	chosen, ok := media.PickCodec(codecs, []string{t.Codec.String()}, profileOf(t.Fmtp))
	if !ok {
		chosen, ok = media.PickCodec(codecs, []string{t.Codec.String()}, "")
	}
	if !ok {
		return fmt.Errorf("%s: %s is not a codec this server offers", t.Kind, t.Codec)
	}
	if err := tr.SetCodecPreferences(media.WithRTX(chosen, codecs)); err != nil {
		return err
	}
	down.Start()
	go down.ReadRTCP(tr.Sender())
	pl.downs = append(pl.downs, down)
	return nil
}

// profileOf is the profile in a recorded fmtp, as a record request's videoprofile names it: the
// H.264 profile-level-id or the VP9 profile-id.
func profileOf(fmtp string) string {
	for _, kv := range strings.Split(fmtp, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if k == "profile-level-id" || k == "profile-id" {
			return v
		}
	}
	return ""
}

// start takes the client's answer; the playout begins once the PeerConnection is up.
func (s *session) start(jsep *plugin.JSEP) (map[string]any, *plugin.RequestError) {
	s.mu.Lock()
	pl := s.play
	s.mu.Unlock()
	if pl == nil {
		return nil, errorf(ErrInvalidState, "Not a playout session, can't start")
	}
	if jsep == nil || jsep.SDP == "" {
		return nil, errorf(ErrMissingElement, "Missing SDP answer")
	}
	p, err := s.h.Peer()
	if err != nil {
		return nil, errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	if err := p.SetAnswer(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: jsep.SDP}); err != nil {
		return nil, errorf(ErrInvalidSDP, "Error parsing answer: %v", err)
	}
	pl.mu.Lock()
	pl.answered = true
	pl.mu.Unlock()
	pl.begin()
	return map[string]any{"status": "playing"}, nil
}

// begin starts the playout once the answer is in and the PeerConnection is up (what comes first
// waits for the other), and hangs up when the recording has played to its end, as Janus does.
func (pl *player) begin() {
	ready := pl.s.isReady()
	pl.mu.Lock()
	if !pl.answered || !ready || pl.started || pl.closed {
		pl.mu.Unlock()
		return
	}
	pl.started = true
	pl.mu.Unlock()
	pl.src.Start()
	go func() {
		<-pl.src.Done()
		pl.mu.Lock()
		closed := pl.closed
		pl.mu.Unlock()
		if !closed {
			pl.s.h.ClosePeer("playout done")
		}
	}()
}

// close stops the playout.
func (pl *player) close() {
	pl.mu.Lock()
	pl.closed = true
	pl.mu.Unlock()
	for _, d := range pl.downs {
		d.Stop()
	}
	_ = pl.src.Close()
}
