package recordplay

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
)

// medium is one recorded stream of a recording: its file (as the .nfo names it) and what its info
// header says, or why it cannot be played.
type medium struct {
	file    string
	codec   media.Codec
	fmtp    string
	opusRED bool
	err     error
}

// recording is one entry of the library.
type recording struct {
	nfo
	audio, video medium
	// base is the file names' stem while recording (rec-<id> or the request's filename).
	base string
	// completed: the .nfo exists. A recording in progress is not listed and cannot be played.
	completed bool
}

// invalid is a .nfo file the last scan could not list, and why.
type invalid struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// library is the plugin's recordings directory: the recordings its .nfo files describe and those
// being recorded.
type library struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex
	recs    map[uint64]*recording
	invalid []invalid
}

func newLibrary(dir string, log *slog.Logger) (*library, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("recordplay: recordings directory: %w", err)
	}
	return &library{dir: abs, log: log, recs: map[uint64]*recording{}}, nil
}

// scan reads the directory again, as Janus's update: recordings whose .nfo appeared are added
// (a known id is kept as it is), those whose .nfo went away are removed; recordings in progress
// stay. A .nfo that cannot be listed is logged and reported by list.
func (l *library) scan() {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, os.ErrNotExist) {
		err = nil // created by the first recording
	}
	if err != nil {
		l.log.Error("reading the recordings directory", "dir", l.dir, "err", err)
		return
	}
	found := map[uint64]*recording{}
	var bad []invalid
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || len(name) < 4 || !strings.EqualFold(name[len(name)-4:], ".nfo") {
			continue
		}
		rec, err := l.load(name)
		if err == nil && found[rec.ID] != nil {
			err = fmt.Errorf("recording %d is described by another .nfo too", rec.ID)
		}
		if err != nil {
			l.log.Warn("skipping recording", "nfo", name, "err", err)
			bad = append(bad, invalid{name, err.Error()})
			continue
		}
		found[rec.ID] = rec
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, rec := range l.recs {
		if rec.completed && found[id] == nil {
			delete(l.recs, id)
		}
	}
	for id, rec := range found {
		if l.recs[id] == nil {
			l.recs[id] = rec
		}
	}
	l.invalid = bad
}

// load reads one .nfo and looks into the files it names.
func (l *library) load(name string) (*recording, error) {
	path := filepath.Join(l.dir, name)
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxNFO {
		return nil, fmt.Errorf("%d bytes, more than the %d a .nfo may have", st.Size(), maxNFO)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n, err := parseNFO(b)
	if err != nil {
		return nil, err
	}
	rec := &recording{nfo: n, completed: true}
	if n.Audio != "" {
		rec.audio = l.probe(n.Audio, false)
	}
	if n.Video != "" {
		rec.video = l.probe(n.Video, true)
	}
	return rec, nil
}

// probe reads the info header of a recording's file.
func (l *library) probe(file string, video bool) medium {
	m := medium{file: file}
	path, err := l.path(file)
	if err != nil {
		m.err = err
		return m
	}
	r, err := record.OpenMJR(path)
	if err != nil {
		m.err = err
		return m
	}
	defer r.Close()
	info := r.Info()
	m.codec, m.fmtp, m.opusRED = media.CodecByName(info.Codec), info.Fmtp, info.OpusRED > 0
	switch {
	case m.codec == media.CodecUnknown:
		m.err = fmt.Errorf("%s: unknown codec %q", file, info.Codec)
	case m.codec.IsVideo() != video:
		m.err = fmt.Errorf("%s: a %s recording where the .nfo says %s", file, info.Codec, map[bool]string{true: "video", false: "audio"}[video])
	}
	if m.err != nil {
		m.codec = media.CodecUnknown
	}
	return m
}

// errOutside is what a file name that would leave the recordings directory gets.
var errOutside = errors.New("not a file name in the recordings directory")

// path resolves a file a .nfo names inside the directory (".mjr" added when missing, as Janus
// does): a plain file name, which neither names another directory nor, through a symbolic link,
// leads out of this one.
func (l *library) path(file string) (string, error) {
	if !plainName(file) {
		return "", fmt.Errorf("%q: %w", file, errOutside)
	}
	if !strings.HasSuffix(file, ".mjr") {
		file += ".mjr"
	}
	p := filepath.Join(l.dir, file)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(l.dir)
	if err != nil {
		return "", err
	}
	if filepath.Dir(real) != root {
		return "", fmt.Errorf("%q: %w", file, errOutside)
	}
	return p, nil
}

// plainName reports whether s is a file name and nothing more: no directory, no "..", no NUL.
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00") && len(s) <= 255
}

// list returns the completed recordings, by id.
func (l *library) list() []*recording {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*recording
	for _, r := range l.recs {
		if r.completed {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *recording) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// invalidFiles are the .nfo files the last scan skipped.
func (l *library) invalidFiles() []invalid {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.invalid)
}

// get returns a completed recording.
func (l *library) get(id uint64) *recording {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.recs[id]; r != nil && r.completed {
		return r
	}
	return nil
}

// reserve enters a new recording in progress under id (a random free one when 0) whose files are
// named from base (rec-<id> when empty). It fails when id is taken (errIDTaken) or another
// recording in progress writes files of that name (errBaseTaken): two writers on one file would
// ruin both.
func (l *library) reserve(id uint64, n nfo, base string) (*recording, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != 0 && l.recs[id] != nil {
		return nil, errIDTaken
	}
	for id == 0 || l.recs[id] != nil {
		id = plugin.RandomID()
	}
	if base == "" {
		base = fmt.Sprintf("rec-%d", id)
	}
	for _, r := range l.recs {
		if !r.completed && r.base == base {
			return nil, errBaseTaken
		}
	}
	n.ID = id
	r := &recording{nfo: n, base: base}
	l.recs[id] = r
	return r, nil
}

var (
	errIDTaken   = errors.New("id taken")
	errBaseTaken = errors.New("file name in use")
)

// complete writes the .nfo of a recording that ended and lists it; a recording that recorded
// nothing is forgotten.
func (l *library) complete(r *recording) error {
	if r.Audio == "" && r.Video == "" {
		l.forget(r)
		return nil
	}
	path := filepath.Join(l.dir, fmt.Sprintf("%d.nfo", r.ID))
	if err := os.WriteFile(path, r.format(), 0o644); err != nil {
		l.forget(r)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r.completed = true
	return nil
}

// forget removes a recording in progress.
func (l *library) forget(r *recording) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.recs[r.ID] == r {
		delete(l.recs, r.ID)
	}
}
