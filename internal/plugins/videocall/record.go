package videocall

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
)

// A user's side of a call is recorded as Janus's videocall records it: `set` with `record: true`
// writes what this user sends (the first audio and the first video m-line) to <filename>-audio.mjr
// and <filename>-video.mjr, or videocall-<user>-<peer>-<µs>-audio.mjr, inside
// plugins.videocall.recordings_dir; `record: false` and the end of the call stop it. The
// recordings are sinks of the user's Receivers.

// checkFilename refuses a filename that leaves the recordings directory before anything of the
// request is applied.
func (s *session) checkFilename(st *settings) *plugin.RequestError {
	if st.filename == nil || st.record == nil || !*st.record {
		return nil
	}
	if _, err := record.Confine(s.p.cfg.RecordingsDir, "", *st.filename+"-audio.mjr"); err != nil {
		return plugin.Errorf(ErrInvalidElement, "Invalid element (filename: %v)", err)
	}
	return nil
}

// applyRecord starts or stops this user's recording as `set` asks (only in a call, where there is
// media to record). A failure to write is logged and the call goes on, as in Janus.
func (s *session) applyRecord(c *call, st *settings) {
	if st.record == nil {
		return
	}
	s.stopRecording()
	if !*st.record || c == nil {
		return
	}
	s.p.mu.Lock()
	base := fmt.Sprintf("videocall-%s-%s-%d", s.username, c.other(c.leg(s)).s.username, time.Now().UnixMicro())
	s.p.mu.Unlock()
	if st.filename != nil {
		base = *st.filename
	}
	if err := s.startRecording(c.leg(s), base); err != nil {
		s.log.Warn("videocall recording", "err", err)
	}
}

// startRecording records the leg's first audio and first video m-line as one participant.
func (s *session) startRecording(l *leg, base string) error {
	path, err := record.Confine(s.p.cfg.RecordingsDir, "", base+"-audio.mjr")
	if err != nil {
		return err
	}
	tracks := l.list()
	sort.Slice(tracks, func(i, j int) bool { return tracks[i].mid < tracks[j].mid })
	opts := s.p.rec
	opts.Log = s.log
	part, err := record.NewParticipant(filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), "-audio.mjr"), opts)
	if err != nil {
		return err
	}
	names := map[string]any{}
	for _, t := range tracks {
		kind := "audio"
		if t.video {
			kind = "video"
		}
		if names[kind] != nil || t.recv == nil {
			continue
		}
		top := 0
		for _, layer := range t.layerOf {
			top = max(top, layer)
		}
		rt, err := part.Record(t.recv, "", t.cap.SDPFmtpLine, record.WithLayer(top))
		if err != nil {
			_, _ = part.Close()
			return err
		}
		names[kind] = filepath.Base(rt.MJR().Path())
	}
	s.recMu.Lock()
	s.recording, s.recNames = part, names
	s.recMu.Unlock()
	s.log.Info("videocall recording", "dir", filepath.Dir(path), "files", names)
	return nil
}

// stopRecording ends this user's recording, if any, and logs what a slow or full disk cost it.
func (s *session) stopRecording() {
	s.recMu.Lock()
	part := s.recording
	s.recording, s.recNames = nil, nil
	s.recMu.Unlock()
	if part == nil {
		return
	}
	st, err := part.Close()
	dropped := st.Dropped
	for _, m := range st.MJR {
		dropped += m.Dropped
	}
	if err != nil || dropped > 0 || st.Playable.LeftOut > 0 {
		s.log.Warn("videocall recording closed", "dropped", dropped, "playable", st.Path, "left_out", st.Playable.LeftOut, "err", err)
	}
}
