package audiobridge

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-rtc/strata/internal/audio"
)

// mixRecording is the room's recording of its full mix to a WAV file, as Janus records it. The
// mixer hands it each tick's mix; a goroutine of the recorder writes.
type mixRecording struct {
	rec  *audio.WAVRecorder
	path string
}

func (m *mixRecording) write(pcm []int16) { m.rec.Write(pcm) }

func (m *mixRecording) close() { _ = m.rec.Close() }

// recordingPath is where the mix goes: record_file (in record_dir when relative), or Janus's
// janus-audioroom-<room>-<µs>.wav, within the recordings directory.
func (r *room) recordingPath(file, dir *string) (string, *Error) {
	name := fmt.Sprintf("janus-audioroom-%d-%d.wav", r.id, time.Now().UnixMicro())
	if file != nil && *file != "" {
		name = *file
	} else if r.opts.RecordFile != "" {
		name = r.opts.RecordFile
	}
	d := r.opts.RecordDir
	if dir != nil {
		d = *dir
	}
	return confined(r.p.cfg.RecordingsDir, d, name)
}

// startRecordingLocked starts recording the mix (a no-op when it is on); r.mu is held.
func (r *room) startRecordingLocked(file, dir *string) *Error {
	if r.recording != nil {
		return nil
	}
	path, perr := r.recordingPath(file, dir)
	if perr != nil {
		return perr
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return errorf(ErrUnknown, "Error creating the recording folder (%v)", err)
	}
	rec, err := audio.NewWAVRecorder(path, r.format())
	if err != nil {
		r.p.log.Warn("audiobridge recording", "room", r.id, "err", err)
		return errorf(ErrUnknown, "Error starting the recording")
	}
	r.recording = &mixRecording{rec: rec, path: path}
	r.opts.Record = true
	r.changedLocked()
	return nil
}

// stopRecordingLocked stops recording; the caller closes what it returns once r.mu is released.
func (r *room) stopRecordingLocked() *mixRecording {
	rec := r.recording
	r.recording = nil
	r.opts.Record = false
	r.changedLocked()
	return rec
}

func (p *Plugin) enableRecording(e *EnableRecording) (any, *Error) {
	r, err := p.authorized(e.Room, e.Secret)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if e.RecordDir != nil {
		r.opts.RecordDir = *e.RecordDir
	}
	var stopped *mixRecording
	var rerr *Error
	if e.Record {
		rerr = r.startRecordingLocked(e.RecordFile, nil)
	} else {
		stopped = r.stopRecordingLocked()
	}
	r.mu.Unlock()
	if stopped != nil {
		stopped.close()
	}
	if rerr != nil {
		return nil, rerr
	}
	rec := e.Record
	return RecordingReply{Audiobridge: "success", Record: &rec}, nil
}
