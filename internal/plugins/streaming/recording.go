package streaming

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/source"
)

var errNoMedia = errors.New("the stream has no media to record")

// recording handles `recording`: start or stop .mjr recordings of an RTP mountpoint's audio and
// video streams (a record.MJR on the stream's Receiver, recording its base layer as Janus's does).
// File names are Janus's: the name given, with ".mjr" added when missing, inside
// plugins.streaming.recordings_dir.
func (p *Plugin) recording(r *Recording) (any, *Error) {
	mp := p.localMountpoint(r.ID)
	if mp == nil {
		return nil, NoSuchMountpoint(r.ID)
	}
	if err := r.Check(mp.secretValue(), mp.rtpLive()); err != nil {
		return nil, err
	}
	if r.Action == "start" {
		return p.startRecording(mp, r)
	}
	targets := map[*mpStream]bool{}
	for _, m := range r.Media {
		if st := mp.stream(m.MID); st != nil {
			targets[st] = true
		}
	}
	for kind, on := range map[source.Kind]bool{source.Audio: r.StopAudio, source.Video: r.StopVideo, source.Data: r.StopData} {
		if st := firstOfKind(mp, kind); on && st != nil {
			targets[st] = true
		}
	}
	if len(targets) == 0 {
		return nil, errorf(ErrInvalidReq, "Missing audio, video and/or data")
	}
	for st := range targets {
		st.stopRecording()
	}
	return map[string]any{Short: "ok"}, nil
}

// startRecording starts the recordings a start names: all of them, or none (Janus refuses the
// request when a stream is already recording).
func (p *Plugin) startRecording(mp *mountpoint, r *Recording) (any, *Error) {
	files := map[*mpStream]string{}
	for _, m := range r.Media {
		if st := mp.stream(m.MID); st != nil {
			files[st] = m.Filename
		}
	}
	for kind, name := range map[source.Kind]*string{source.Audio: r.Audio, source.Video: r.Video, source.Data: r.Data} {
		if st := firstOfKind(mp, kind); name != nil && st != nil {
			files[st] = *name
		}
	}
	if len(files) == 0 {
		return nil, errorf(ErrInvalidReq, "Missing audio, video and/or data")
	}
	for st := range files {
		if st.recording() != "" {
			return nil, errorf(ErrInvalidReq, "Recording for audio, video and/or data already started for this stream")
		}
	}
	for st, name := range files {
		if err := p.record(st, name); err != nil {
			p.log.Warn("streaming recording", "mountpoint", mp.id, "mid", st.mid, "err", err)
			return nil, errorf(ErrCantRecord, "Error starting recorder for %s", st.kind)
		}
	}
	return map[string]any{Short: "ok"}, nil
}

func firstOfKind(mp *mountpoint, kind source.Kind) *mpStream {
	for _, st := range mp.streams {
		if st.kind == kind {
			return st
		}
	}
	return nil
}

// record starts one stream's recording to name: a record.Participant of one track, so that with
// recording.playable the stream is also <name>.webm (or .opus, .mp4) beside <name>.mjr.
func (p *Plugin) record(st *mpStream, name string) error {
	if st.recv == nil {
		return errNoMedia
	}
	if !strings.HasSuffix(name, ".mjr") {
		name += ".mjr"
	}
	path, err := record.Confine(p.cfg.RecordingsDir, "", name)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(filepath.Base(path), ".mjr")
	rec, err := record.NewParticipant(filepath.Dir(path), base, p.rec)
	if err != nil {
		return err
	}
	if _, err := rec.Record(st.recv, base, st.fmtp, record.WithLayer(0)); err != nil {
		_, _ = rec.Close()
		return err
	}
	st.recMu.Lock()
	st.recorder, st.recFile = rec, path
	st.recMu.Unlock()
	return nil
}

// recording is the file a stream records to ("" when not recording).
func (st *mpStream) recording() string {
	st.recMu.Lock()
	defer st.recMu.Unlock()
	return st.recFile
}

// stopRecording ends a stream's recording, if any.
func (st *mpStream) stopRecording() {
	st.recMu.Lock()
	rec := st.recorder
	st.recorder, st.recFile = nil, ""
	st.recMu.Unlock()
	if rec != nil {
		_, _ = rec.Close()
	}
}
