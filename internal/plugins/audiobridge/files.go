package audiobridge

import (
	"strconv"
	"sync"

	"github.com/strata-rtc/strata/internal/audio"

	"github.com/strata-rtc/strata/internal/plugin"
)

// announcement is a play_file: an Ogg/Opus file decoded ahead (off the mixer's goroutine) into the
// room's format, mixed as one more source that listens to nothing.
type announcement struct {
	r      *room
	id     string
	src    *audio.FileSource
	ended  sync.Once
	closer sync.Once
}

// next is the announcement's frame this tick (nil while its reader is behind); at its end the
// room removes it, off the mixer's goroutine.
func (a *announcement) next() ([]int16, bool) {
	pcm, ok := a.src.Next()
	if !ok && a.src.Done() {
		a.ended.Do(func() { go a.r.stopFile(a.id, a) })
	}
	return pcm, ok
}

func (a *announcement) close() { a.closer.Do(func() { a.src.Close() }) }

func (p *Plugin) playFile(f *PlayFile) (any, *Error) {
	r, err := p.authorized(f.Room, f.Secret)
	if err != nil {
		return nil, err
	}
	if err := p.checkAdminKey(f.AdminKey, p.cfg.LockPlayFile); err != nil {
		return nil, err
	}
	if err := r.checkGroup(f.Group, true); err != nil {
		return nil, err
	}
	id := ""
	if f.FileID != nil {
		id = *f.FileID
	}
	r.mu.Lock()
	if id != "" && r.files[id] != nil {
		r.mu.Unlock()
		return nil, errorf(ErrIDExists, "File ID exists (%s)", id)
	}
	for id == "" || r.files[id] != nil {
		id = strconv.FormatUint(plugin.RandomID(), 10)
	}
	path, perr := confined(p.cfg.FilesDir, "", f.Filename)
	if perr != nil {
		r.mu.Unlock()
		return nil, perr
	}
	src, oerr := audio.OpenFile(path, r.format(), f.Loop)
	if oerr != nil {
		r.mu.Unlock()
		p.log.Warn("audiobridge play_file", "room", r.id, "err", oerr)
		return nil, errorf(ErrUnknown, "Error opening file")
	}
	r.files[id] = &announcement{r: r, id: id, src: src}
	r.changedLocked()
	r.mu.Unlock()
	r.broadcast(FileReply{Audiobridge: "announcement-started", Room: r.id, FileID: id}, nil)
	return FileReply{Audiobridge: "success", Room: r.id, FileID: id}, nil
}

func (p *Plugin) fileCheck(f *FileCheck) (any, *Error) {
	r, err := p.authorized(f.Room, f.Secret)
	if err != nil {
		return nil, err
	}
	if err := p.checkAdminKey(f.AdminKey, p.cfg.LockPlayFile); err != nil {
		return nil, err
	}
	if f.Op == "is_playing" {
		r.mu.Lock()
		playing := r.files[f.FileID] != nil
		r.mu.Unlock()
		return FileReply{Audiobridge: "success", Room: r.id, FileID: f.FileID, Playing: &playing}, nil
	}
	r.stopFile(f.FileID, nil)
	return FileReply{Audiobridge: "success", Room: r.id, FileID: f.FileID}, nil
}

// stopFile ends an announcement (only if it is still a when a is not nil) and tells everyone.
func (r *room) stopFile(id string, a *announcement) {
	r.mu.Lock()
	cur := r.files[id]
	if cur == nil || (a != nil && cur != a) {
		r.mu.Unlock()
		return
	}
	delete(r.files, id)
	r.changedLocked()
	r.mu.Unlock()
	cur.close()
	r.broadcast(FileReply{Audiobridge: "announcement-stopped", Room: r.id, FileID: id}, nil)
}
