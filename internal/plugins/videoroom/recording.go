package videoroom

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Publishers are recorded as Janus's videoroom records them: one .mjr per published stream, a
// record.Recording (a sink) on the stream's Receiver, never in the packet path. A publisher is
// recorded while its own `record` (publish/configure/joinandconfigure) or its room's `record`
// (create, enable_recording) says so: the recordings start once the publisher has streams and end
// with `record: false`, enable_recording false, or the end of the PeerConnection (which also
// forgets the publisher's `filename`, as Janus does). With lock_record, record and filename need
// the room's secret; without it they are ignored. Paths stay inside plugins.videoroom.recordings_dir.

// recordSettings are the recording fields of a publish/configure request.
type recordSettings struct {
	record   *bool
	filename *string
}

// parseRecord reads record and filename; with the room's lock_record and a wrong or missing
// secret they are dropped, as Janus drops them.
func (pub *publisher) parseRecord(b body) (recordSettings, *requestError) {
	var rs recordSettings
	rec, hasRec, err := b.boolean("record")
	if err != nil {
		return rs, err
	}
	name, hasName, err := b.str("filename", false)
	if err != nil {
		return rs, err
	}
	if hasName {
		if _, _, err := pub.recordingBase(name); err != nil {
			return rs, err
		}
		rs.filename = &name
	}
	if hasRec {
		rs.record = &rec
	}
	o := pub.room.options()
	if (hasRec || hasName) && o.lockRecord && o.secret != "" && b.checkSecret("secret", o.secret) != nil {
		return recordSettings{}, nil
	}
	return rs, nil
}

// applyRecord applies a request's recording fields: a change of record starts (if the publisher's
// media is up) or stops the recordings.
func (pub *publisher) applyRecord(rs recordSettings) {
	pub.recMu.Lock()
	defer pub.recMu.Unlock()
	prev := pub.recording
	if rs.record != nil {
		pub.recording = *rs.record
	}
	if rs.filename != nil {
		pub.recBase = *rs.filename
	}
	pub.syncRecordingLocked(prev)
}

// setRecording is enable_recording's change of one publisher.
func (pub *publisher) setRecording(on bool) {
	pub.recMu.Lock()
	defer pub.recMu.Unlock()
	prev := pub.recording
	pub.recording = on
	pub.syncRecordingLocked(prev)
}

func (pub *publisher) syncRecordingLocked(prev bool) {
	switch {
	case pub.recording == prev:
	case !pub.recording:
		pub.stopRecordingLocked()
	case pub.isActive():
		pub.startRecordingLocked()
	}
}

// recordIfWanted starts the recordings of streams not yet recorded when the publisher or its room
// records: after a negotiation added streams, and when the media comes up.
func (pub *publisher) recordIfWanted() {
	roomRecords := pub.room.options().record
	pub.recMu.Lock()
	defer pub.recMu.Unlock()
	if !roomRecords && !pub.recording {
		return
	}
	pub.recording = true
	pub.startRecordingLocked()
}

// stopRecording ends the recordings when the publication ends, and forgets the filename.
func (pub *publisher) stopRecording() {
	pub.recMu.Lock()
	defer pub.recMu.Unlock()
	pub.recBase = ""
	pub.stopRecordingLocked()
}

// recordingBase is the first part of the publisher's file names, and where they go: the
// request's filename, or Janus's videoroom-<room>-user-<id>-<µs>, in the room's rec_dir inside the
// configured directory. A stream's .mjr is <base>-<kind>-<mindex>.mjr; with recording.playable the
// publisher's playable file is <base>.webm (or .mp4, .opus).
func (pub *publisher) recordingBase(filename string) (dir, base string, rerr *requestError) {
	if filename == "" {
		filename = fmt.Sprintf("videoroom-%d-user-%d-%d", pub.room.id, pub.id, time.Now().UnixMicro())
	}
	path, err := record.Confine(pub.s.p.cfg.RecordingsDir, pub.room.options().recDir, filename+"-audio-0.mjr")
	if err != nil {
		return "", "", errorf(ErrInvalidElement, "Invalid element (filename: %v)", err)
	}
	return filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), "-audio-0.mjr"), nil
}

// startRecordingLocked records every stream that is not recorded yet, as tracks of the
// publisher's recording; a failure (a full disk, a bad rec_dir) is logged and the publication goes
// on, as in Janus.
func (pub *publisher) startRecordingLocked() {
	if err := pub.recordStreamsLocked(); err != nil {
		pub.s.log.Warn("videoroom recording", "room", pub.room.id, "id", pub.id, "err", err)
	}
}

func (pub *publisher) recordStreamsLocked() error {
	streams := pub.streamList()
	if len(streams) == 0 {
		return nil
	}
	if pub.recPart == nil {
		dir, base, rerr := pub.recordingBase(pub.recBase)
		if rerr != nil {
			return rerr
		}
		opts := pub.s.p.rec
		opts.Log = pub.s.log
		part, err := record.NewParticipant(dir, base, opts)
		if err != nil {
			return err
		}
		pub.recPart, pub.recName = part, base
	}
	for _, st := range streams {
		if st.rec != nil {
			continue
		}
		st.mu.Lock()
		opts := []record.Option{record.WithDescription(st.description), record.WithLayer(st.topLayer())}
		st.mu.Unlock()
		if id := st.recv.Config().Extensions.VideoOrientation; id != 0 && st.kind == "video" {
			opts = append(opts, record.WithExtension(int(id), sfu.VideoOrientationURI))
		}
		t, err := pub.recPart.Record(st.recv, fmt.Sprintf("%s-%s-%d", pub.recName, st.kind, st.mindex), st.fmtp, opts...)
		if err != nil {
			return err
		}
		st.rec = t
		pub.recordedStreams = append(pub.recordedStreams, st)
	}
	return nil
}

// stopRecordingLocked ends the publisher's recording and logs what a slow or full disk cost it.
func (pub *publisher) stopRecordingLocked() {
	for _, st := range pub.recordedStreams {
		st.rec = nil
	}
	part := pub.recPart
	pub.recordedStreams, pub.recPart, pub.recName = nil, nil, ""
	if part == nil {
		return
	}
	st, err := part.Close()
	packets, dropped := uint64(0), st.Dropped
	for _, m := range st.MJR {
		packets, dropped = packets+m.Packets, dropped+m.Dropped
	}
	if err != nil || dropped > 0 || st.Playable.LeftOut > 0 {
		pub.s.log.Warn("videoroom recording closed", "room", pub.room.id, "id", pub.id, "playable", st.Path,
			"left_out", st.Playable.LeftOut, "packets", packets, "dropped", dropped, "err", err)
	}
}

// recordingOf is the name of the .mjr file st is recorded to, "" when it is not.
func (pub *publisher) recordingOf(st *pubStream) string {
	pub.recMu.Lock()
	defer pub.recMu.Unlock()
	if st.rec == nil {
		return ""
	}
	return filepath.Base(st.rec.MJR().Path())
}

// checkRecDir refuses a room's rec_dir outside the configured directory (Janus takes any).
func (p *Plugin) checkRecDir(dir string) *requestError {
	if dir == "" {
		return nil
	}
	if _, err := record.Confine(p.cfg.RecordingsDir, dir, "x.mjr"); err != nil {
		return errorf(ErrInvalidElement, "Invalid element (rec_dir: %v)", err)
	}
	return nil
}

// topLayer is the simulcast layer a recording keeps: the highest, as Janus records substream 2.
func (st *pubStream) topLayer() int {
	top := max(len(st.layers)-1, 0)
	for _, l := range st.rids {
		top = max(top, l)
	}
	return top
}
