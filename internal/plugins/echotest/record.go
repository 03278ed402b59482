package echotest

import (
	"fmt"
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
	for _, video := range []bool{false, true} {
		st := s.firstStreamLocked(video)
		if st == nil {
			continue
		}
		kind := "audio"
		if video {
			kind = "video"
		}
		if rec := s.startRecording(st, base+"-"+kind+".mjr"); rec != nil {
			s.recordings[kind] = rec
		}
	}
}

// startRecording records one stream; a failure (a full disk, a missing permission) is logged and
// the echo goes on, as in Janus.
func (s *session) startRecording(st *echoStream, name string) *record.Recording {
	path, err := record.Confine(s.plugin.cfg.RecordingsDir, "", name)
	if err != nil {
		s.log.Warn("echotest recording", "err", err)
		return nil
	}
	opts := []record.Option{record.WithFmtp(st.fmtp), record.WithLayer(st.topLayer())}
	if id := st.recv.Config().Extensions.VideoOrientation; id != 0 && st.video {
		opts = append(opts, record.WithExtension(int(id), sfu.VideoOrientationURI))
	}
	rec, err := record.OnReceiver(st.recv, path, opts...)
	if err != nil {
		s.log.Warn("echotest recording", "err", err)
		return nil
	}
	s.log.Info("echotest recording", "path", path)
	return rec
}

// stopRecording ends the recordings, if any, and logs what each lost to a slow or full disk.
func (s *session) stopRecording() {
	s.mu.Lock()
	recs := s.recordings
	s.recordings = map[string]*record.Recording{}
	s.mu.Unlock()
	for _, rec := range recs {
		err := rec.Stop()
		st := rec.Stats()
		if err != nil || st.Dropped > 0 {
			s.log.Warn("echotest recording closed", "path", rec.Path(), "packets", st.Packets, "dropped", st.Dropped, "err", err)
		}
	}
}

// recordingInfoLocked is handle_info's "recording": the file name of each kind recorded; s.mu must be held.
func (s *session) recordingInfoLocked() map[string]any {
	if len(s.recordings) == 0 {
		return nil
	}
	out := map[string]any{}
	for kind, rec := range s.recordings {
		out[kind] = rec.Name()
	}
	return out
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
