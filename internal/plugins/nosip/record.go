package nosip

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/rtpbridge"
)

// A call is recorded as Janus's NoSIP records it: each side (the browser's "user", the plain
// "peer") and each kind to its own .mjr file, <filename>-user-audio.mjr ... -peer-video.mjr, or
// nosip-<handle>-<µs>-own-audio.mjr etc. without a filename, inside plugins.nosip.recordings_dir.
// Each side is one record.Participant on the bridge's Receivers of that side.

// recordings are the call's recorders: one participant per side, with its files.
type recordings struct {
	user, peer           *record.Participant
	userFiles, peerFiles map[string]string
}

func (r *recordings) names() map[string]any {
	out := map[string]any{}
	for k, v := range r.userFiles {
		out[k] = v
	}
	for k, v := range r.peerFiles {
		out[k+"-peer"] = v
	}
	return out
}

var recordingParams = []plugin.Param{
	{Name: "action", Kind: plugin.String, Required: true}, {Name: "audio", Kind: plugin.Bool},
	{Name: "video", Kind: plugin.Bool}, {Name: "peer_audio", Kind: plugin.Bool},
	{Name: "peer_video", Kind: plugin.Bool}, {Name: "filename", Kind: plugin.String},
}

// recording starts or stops recordings, as Janus's `recording` request.
func (s *session) recording(body plugin.Body) (map[string]any, *plugin.JSEP, *plugin.RequestError) {
	if err := body.Validate(recordingParams...); err != nil {
		return nil, nil, err
	}
	action := strings.ToLower(body.Str("action"))
	if action != "start" && action != "stop" {
		return nil, nil, plugin.Errorf(ErrInvalidElement, "Invalid action (should be start|stop)")
	}
	audio, video, peerAudio, peerVideo := body.Bool("audio"), body.Bool("video"), body.Bool("peer_audio"), body.Bool("peer_video")
	if !audio && !video && !peerAudio && !peerVideo {
		return nil, nil, plugin.Errorf(ErrRecording, "Invalid request (at least one of audio, video, peer_audio and peer_video should be true)")
	}
	if action == "stop" {
		s.stopRecording(audio, video, peerAudio, peerVideo)
		return map[string]any{"event": "recordingupdated"}, nil, nil
	}
	base := body.Str("filename")
	if base != "" {
		if _, err := record.Confine(s.plugin.cfg.RecordingsDir, "", base+"-user-audio.mjr"); err != nil {
			return nil, nil, plugin.Errorf(ErrRecording, "Invalid filename: %v", err)
		}
	}
	if err := s.startRecording(base, audio, video, peerAudio, peerVideo); err != nil {
		return nil, nil, plugin.Errorf(ErrRecording, "%v", err)
	}
	return map[string]any{"event": "recordingupdated"}, nil, nil
}

// startRecording records the sides and kinds asked for; a side already recorded is left as is.
func (s *session) startRecording(base string, audio, video, peerAudio, peerVideo bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bridge == nil {
		return fmt.Errorf("no call to record")
	}
	fromBrowser, fromPlain := s.bridge.Receivers()
	if len(fromBrowser) == 0 {
		return fmt.Errorf("no media negotiated yet")
	}
	now := time.Now().UnixMicro()
	if (audio || video) && s.rec.user == nil {
		name := fmt.Sprintf("nosip-%d-%d-own", s.h.ID(), now)
		if base != "" {
			name = base + "-user"
		}
		part, files, err := s.recordSide(name, fromBrowser, audio, video)
		if err != nil {
			return err
		}
		s.rec.user, s.rec.userFiles = part, files
	}
	if (peerAudio || peerVideo) && s.rec.peer == nil {
		name := fmt.Sprintf("nosip-%d-%d-peer", s.h.ID(), now)
		if base != "" {
			name = base + "-peer"
		}
		part, files, err := s.recordSide(name, fromPlain, peerAudio, peerVideo)
		if err != nil {
			return err
		}
		s.rec.peer, s.rec.peerFiles = part, files
	}
	return nil
}

// recordSide records the tracks of one side as one participant: name-audio.mjr, name-video.mjr.
func (s *session) recordSide(name string, tracks []rtpbridge.Track, audio, video bool) (*record.Participant, map[string]string, error) {
	path, err := record.Confine(s.plugin.cfg.RecordingsDir, "", name+"-audio.mjr")
	if err != nil {
		return nil, nil, err
	}
	opts := s.plugin.rec
	opts.Log = s.log
	part, err := record.NewParticipant(filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), "-audio.mjr"), opts)
	if err != nil {
		return nil, nil, err
	}
	files := map[string]string{}
	for _, t := range tracks {
		if (t.Video && !video) || (!t.Video && !audio) {
			continue
		}
		st, err := part.Record(t.Receiver, "", t.Fmtp)
		if err != nil {
			_, _ = part.Close()
			return nil, nil, err
		}
		files[map[bool]string{false: "audio", true: "video"}[t.Video]] = filepath.Base(st.MJR().Path())
	}
	return part, files, nil
}

// stopRecording closes the recordings of the sides named (a side is recorded as a whole).
func (s *session) stopRecording(audio, video, peerAudio, peerVideo bool) {
	s.mu.Lock()
	var parts []*record.Participant
	if (audio || video) && s.rec.user != nil {
		parts = append(parts, s.rec.user)
		s.rec.user, s.rec.userFiles = nil, nil
	}
	if (peerAudio || peerVideo) && s.rec.peer != nil {
		parts = append(parts, s.rec.peer)
		s.rec.peer, s.rec.peerFiles = nil, nil
	}
	s.mu.Unlock()
	for _, p := range parts {
		if st, err := p.Close(); err != nil || st.Dropped > 0 {
			s.log.Warn("nosip recording closed", "dropped", st.Dropped, "err", err)
		}
	}
}
