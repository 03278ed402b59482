package audiobridge

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

// A participant's own audio can be recorded to a Janus .mjr file (join's or configure's record and
// filename, the room's mjrs and mjrs_dir, enable_mjrs): a record.Participant on the participant's
// Receiver, like any other sink; janus-pp-rec turns it into an .opus or .wav file, and with
// recording.playable an Ogg/Opus file <base>.opus is written beside it.

// wantsRecording says whether m's audio is to be recorded: asked by the participant, or by the room.
func (m *member) wantsRecording() bool {
	m.mu.Lock()
	asked := m.record
	m.mu.Unlock()
	m.room.mu.Lock()
	defer m.room.mu.Unlock()
	return asked || m.room.opts.MJRs
}

// mjrPath is where m's recording goes: <filename>-audio.mjr, or Janus's
// janus-audioroom-<room>-user-<id>-<µs>-audio.mjr, in the room's mjrs_dir within recordings_dir.
func (m *member) mjrPath() (string, *Error) {
	m.mu.Lock()
	base := m.filename
	m.mu.Unlock()
	if base == "" {
		base = fmt.Sprintf("janus-audioroom-%d-user-%d-%d", m.room.id, m.id, time.Now().UnixMicro())
	}
	m.room.mu.Lock()
	dir := m.room.opts.MJRsDir
	m.room.mu.Unlock()
	return confined(m.room.p.cfg.RecordingsDir, dir, base+"-audio.mjr")
}

// syncRecording starts or stops m's recording to match wantsRecording, once m has media.
func (m *member) syncRecording() {
	if m.s == nil { // a guest: its node records it
		return
	}
	md := m.s.mediaOf()
	want := m.wantsRecording() && md != nil
	m.mu.Lock()
	recording := m.mjr != nil
	m.mu.Unlock()
	switch {
	case want && !recording:
		if err := m.startRecording(md); err != nil {
			m.room.p.log.Warn("audiobridge participant recording", "room", m.room.id, "id", m.id, "err", err)
		}
	case !want && recording:
		m.stopRecording()
	}
}

// startRecording adds a recording to the participant's receiver.
func (m *member) startRecording(md *sessionMedia) error {
	path, perr := m.mjrPath()
	if perr != nil {
		return perr
	}
	var opts []record.Option
	if id := md.recv.Config().Extensions.AudioLevel; id != 0 {
		opts = append(opts, record.WithExtension(int(id), sfu.AudioLevelURI))
	}
	name := strings.TrimSuffix(filepath.Base(path), ".mjr")
	rec, err := record.NewParticipant(filepath.Dir(path), strings.TrimSuffix(name, "-audio"), m.room.p.rec)
	if err != nil {
		return err
	}
	if _, err := rec.Record(md.recv, name, "", opts...); err != nil {
		_, _ = rec.Close()
		return err
	}
	m.mu.Lock()
	m.mjr = rec
	m.mu.Unlock()
	return nil
}

// stopRecording ends m's recording, if any.
func (m *member) stopRecording() {
	m.mu.Lock()
	rec := m.mjr
	m.mjr = nil
	m.mu.Unlock()
	if rec == nil {
		return
	}
	if _, err := rec.Close(); err != nil {
		m.room.p.log.Warn("audiobridge participant recording", "room", m.room.id, "id", m.id, "err", err)
	}
}

func (p *Plugin) enableMJRs(e *EnableMJRs) (any, *Error) {
	r, err := p.authorized(e.Room, e.Secret)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if e.MJRsDir != nil {
		if _, err := confined(p.cfg.RecordingsDir, *e.MJRsDir, "x"); err != nil {
			r.mu.Unlock()
			return nil, err
		}
		r.opts.MJRsDir = *e.MJRsDir
	}
	r.opts.MJRs = e.MJRs
	members := make([]*member, 0, len(r.members))
	for _, m := range r.members {
		members = append(members, m)
	}
	r.mu.Unlock()
	for _, m := range members {
		m.syncRecording()
	}
	mjrs := e.MJRs
	return RecordingReply{Audiobridge: "success", MJRs: &mjrs}, nil
}
