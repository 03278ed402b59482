package voicemail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/record/convert"
	"github.com/strata-rtc/strata/internal/sfu"
)

// message is one message being recorded: a .mjr on the audio's Receiver, converted to the .opus
// file when it ends.
type message struct {
	mjr, out string
	rec      *record.Recording // nil when there was no audio to record
}

// newMessage prepares the message of recording id, recording recv (nil: nothing to record yet).
func (p *Plugin) newMessage(id uint64, recv *sfu.Receiver) (*message, error) {
	if err := os.MkdirAll(p.cfg.Path, 0o755); err != nil {
		return nil, err
	}
	out := filepath.Join(p.cfg.Path, messageName(id))
	m := &message{mjr: out[:len(out)-len(".opus")] + ".mjr", out: out}
	if recv == nil {
		return m, nil
	}
	rec, err := record.OnReceiver(recv, m.mjr)
	if err != nil {
		return nil, err
	}
	m.rec = rec
	return m, nil
}

// finish stops the recording and converts it; it returns the name of the .opus file, or "" if
// nothing was recorded.
func (m *message) finish(log *slog.Logger) (string, error) {
	if m.rec == nil {
		return "", nil
	}
	stopErr := m.rec.Stop()
	st := m.rec.Stats()
	if stopErr != nil || st.Dropped > 0 {
		log.Warn("voicemail recording", "path", m.mjr, "packets", st.Packets, "dropped", st.Dropped, "err", stopErr)
	}
	defer os.Remove(m.mjr)
	if st.Packets == 0 {
		return "", stopErr
	}
	cs, err := convert.File(m.out, m.mjr)
	if err != nil {
		os.Remove(m.out)
		return "", errors.Join(stopErr, err)
	}
	log.Info("voicemail message", "path", m.out, "duration", cs.Duration, "dropped", st.Dropped)
	return filepath.Base(m.out), nil
}

// negotiate answers a client's offer: Opus on the first audio m-line, received into a Receiver;
// every other m-line is stopped, inactive in the answer (Janus's answer carries audio only).
func (s *session) negotiate(ctx context.Context, jsep *plugin.JSEP) (*plugin.JSEP, error) {
	if jsep.Type != "offer" {
		return nil, plugin.Errorf(ErrInvalidElement, "Unexpected JSEP type %q: the voicemail takes offers", jsep.Type)
	}
	p, err := s.h.Peer(peer.WithoutNACKResponder()) // strata sends nothing back
	if err != nil {
		return nil, plugin.Errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	s.mu.Lock()
	if s.peer != p {
		s.peer, s.recv, s.mid = p, nil, ""
		p.OnTrack(s.onTrack)
	}
	s.mu.Unlock()
	prepare := peer.BeforeLocal(func(pc *webrtc.PeerConnection) error { return s.prepare(pc) })
	answer, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP}, prepare)
	if err != nil {
		return nil, plugin.Errorf(ErrInvalidElement, "Error negotiating: %v", err)
	}
	if s.receiver() == nil {
		return nil, plugin.Errorf(ErrInvalidElement, "No Opus audio in the offer")
	}
	return &plugin.JSEP{Type: "answer", SDP: answer.SDP}, nil
}

// prepare picks Opus on the first audio m-line and builds its Receiver; it rejects the others.
func (s *session) prepare(pc *webrtc.PeerConnection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range pc.GetTransceivers() {
		if t.Mid() == "" || t.Mid() == s.mid {
			continue
		}
		offered := t.Receiver().GetParameters()
		codec, ok := media.PickCodec(offered.Codecs, []string{"opus"}, "")
		if s.recv != nil || t.Kind() != webrtc.RTPCodecTypeAudio || !ok {
			if err := t.Stop(); err != nil {
				return fmt.Errorf("rejecting mid %s: %w", t.Mid(), err)
			}
			continue
		}
		if err := t.SetCodecPreferences([]webrtc.RTPCodecParameters{codec}); err != nil {
			return fmt.Errorf("codec preferences for mid %s: %w", t.Mid(), err)
		}
		s.mid = t.Mid()
		s.recv = sfu.NewReceiver(sfu.ReceiverConfig{ID: fmt.Sprintf("voicemail/%d", s.id), Codec: media.CodecOpus}, nil)
	}
	return nil
}

func (s *session) receiver() *sfu.Receiver {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recv
}

// onTrack feeds the recorded m-line's track into its Receiver; anything else is read and dropped.
func (s *session) onTrack(track *webrtc.TrackRemote, r *webrtc.RTPReceiver) {
	s.mu.Lock()
	var recv *sfu.Receiver
	if s.peer != nil {
		for _, t := range s.peer.PC.GetTransceivers() {
			if t.Receiver() == r && t.Mid() == s.mid {
				recv = s.recv
			}
		}
	}
	s.mu.Unlock()
	if recv != nil {
		recv.SetLayerSSRC(0, uint32(track.SSRC()))
	}
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil {
			return
		}
		if recv != nil {
			recv.WriteRTP(0, buf[:n], sfu.Now())
		}
	}
}
