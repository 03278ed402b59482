package echotest

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

// An echo is recorded as Janus's echotest records it: `record: true` starts one .mjr per kind
// (the first audio and the first video stream), named <filename>-audio.mjr / -video.mjr or
// echotest-<handle>-<µs>-audio.mjr, inside plugins.echotest.recordings_dir; `record: false` and
// the end of the PeerConnection stop them. The recordings are sinks of the streams' Receivers.

// checkFilename checks a request's filename before anything of the request is applied, so that a
// path outside the directory is refused with an error rather than ignored.
func (s *session) checkFilename(r *request) *requestError {
	if r.Filename == nil || r.Record == nil || !*r.Record {
		return nil
	}
	if _, err := record.Confine(s.plugin.cfg.RecordingsDir, "", *r.Filename+"-audio.mjr"); err != nil {
		return &requestError{ErrInvalidElement, "Invalid element (filename: " + err.Error() + ")"}
	}
	return nil
}

// applyRecord starts or stops the recordings as the request asks, after its negotiation (Janus
// records what was negotiated).
func (s *session) applyRecord(r *request) {
	if r.Record == nil {
		return
	}
	s.stopRecording()
	if !*r.Record {
		return
	}
	base := fmt.Sprintf("echotest-%d-%d", s.h.ID(), time.Now().UnixMicro())
	if r.Filename != nil {
		base = *r.Filename
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.startRecordingLocked(base); err != nil {
		// A failure (a full disk, a missing permission) is logged and the echo goes on, as in Janus.
		s.log.Warn("echotest recording", "err", err)
	}
}

// startRecordingLocked records the first audio and the first video stream as one participant:
// base-audio.mjr, base-video.mjr (and with recording.playable one playable file); s.mu is held.
func (s *session) startRecordingLocked(base string) error {
	path, err := record.Confine(s.plugin.cfg.RecordingsDir, "", base+"-audio.mjr")
	if err != nil {
		return err
	}
	var streams []*echoStream
	for _, video := range []bool{false, true} {
		if st := s.firstStreamLocked(video); st != nil {
			streams = append(streams, st)
		}
	}
	if len(streams) == 0 {
		return nil // as in Janus, nothing is recorded before there is media
	}
	opts := s.plugin.rec
	opts.Log = s.log
	part, err := record.NewParticipant(filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), "-audio.mjr"), opts)
	if err != nil {
		return err
	}
	s.recording, s.recNames = part, map[string]any{}
	for _, st := range streams {
		ro := []record.Option{record.WithLayer(st.topLayer())}
		if id := st.recv.Config().Extensions.VideoOrientation; id != 0 && st.video {
			ro = append(ro, record.WithExtension(int(id), sfu.VideoOrientationURI))
		}
		t, err := part.Record(st.recv, "", st.fmtp, ro...)
		if err != nil {
			return err
		}
		kind := "audio"
		if st.video {
			kind = "video"
		}
		s.recNames[kind] = filepath.Base(t.MJR().Path())
	}
	s.log.Info("echotest recording", "dir", filepath.Dir(path), "files", s.recNames)
	return nil
}

// stopRecording ends the recording, if any, and logs what a slow or full disk cost it.
func (s *session) stopRecording() {
	s.mu.Lock()
	part := s.recording
	s.recording, s.recNames = nil, nil
	s.mu.Unlock()
	if part == nil {
		return
	}
	st, err := part.Close()
	dropped := st.Dropped
	for _, m := range st.MJR {
		dropped += m.Dropped
	}
	if err != nil || dropped > 0 || st.Playable.LeftOut > 0 {
		s.log.Warn("echotest recording closed", "dropped", dropped, "playable", st.Path, "left_out", st.Playable.LeftOut, "err", err)
	}
}

// firstStreamLocked is the stream of a kind with the lowest mid; s.mu must be held.
func (s *session) firstStreamLocked(video bool) *echoStream {
	var first *echoStream
	for _, st := range s.streams {
		if st.video == video && (first == nil || st.mid < first.mid) {
			first = st
		}
	}
	return first
}
