package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-rtc/strata/internal/sfu"
)

// ErrOutside is the error of Confine for a path that leaves the configured directory.
var ErrOutside = errors.New("outside")

// Confine resolves a recording's path the way strata's plugins confine what requests name (Janus
// writes wherever a request says, as the server's user): name is joined onto dir (a room's
// rec_dir) unless absolute, and that onto root (the plugin's configured directory) unless
// absolute; the result must lie within root.
func Confine(root, dir, name string) (string, error) {
	p := name
	if dir != "" && !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	abs, err := filepath.Abs(filepath.Clean(p))
	if err != nil {
		return "", fmt.Errorf("invalid path %s: %w", p, err)
	}
	base, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("invalid recordings directory %s: %w", root, err)
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is %w %s", p, ErrOutside, base)
	}
	return abs, nil
}

// Recording is an MJR attached to the Receiver it records.
type Recording struct {
	*MJR
	recv *sfu.Receiver
}

// OnReceiver starts recording recv's track to path (its directory is created if needed): an MJR
// added to recv as a sink. A video recording asks the publisher for a keyframe on the recorded
// layer, so that the file starts decodable soon, as Janus does.
func OnReceiver(recv *sfu.Receiver, path string, opts ...Option) (*Recording, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	m, err := NewMJR(path, recv.Codec(), opts...)
	if err != nil {
		return nil, err
	}
	recv.AddSink(m)
	if recv.Codec().IsVideo() {
		recv.RequestKeyframe(m.layer, sfu.Now())
	}
	return &Recording{MJR: m, recv: recv}, nil
}

// Stop removes the recording from its receiver and closes it; see MJR.Close for the error.
func (r *Recording) Stop() error {
	r.recv.RemoveSink(r.MJR)
	return r.Close()
}

// Name is the recording's file name without its directory, as Janus reports recordings.
func (r *Recording) Name() string { return filepath.Base(r.path) }

// Participant is a recorded participant (an echo, a videoroom publisher): a Session whose track
// sinks are on the participant's Receivers.
type Participant struct {
	s      *Session
	tracks []*SessionTrack
	recvs  []*sfu.Receiver
}

// NewParticipant starts a participant's recording in dir (created if needed): its .mjr files, and
// with opts.Playable one playable file base.webm/.mp4/.opus of all its tracks.
func NewParticipant(dir, base string, opts SessionOptions) (*Participant, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	s, err := NewSession(dir, base, opts)
	if err != nil {
		return nil, err
	}
	return &Participant{s: s}, nil
}

// Record records recv's track to the .mjr file name (without ".mjr"; "" for the Session's
// base-audio/base-video) and, for video, asks the publisher for a keyframe on the recorded layer
// so that the files start decodable soon, as Janus does.
func (p *Participant) Record(recv *sfu.Receiver, name, fmtp string, opts ...Option) (*SessionTrack, error) {
	t, err := p.s.AddTrackAs(name, recv.Codec(), fmtp, opts...)
	if err != nil {
		return nil, err
	}
	p.tracks, p.recvs = append(p.tracks, t), append(p.recvs, recv)
	recv.AddSink(t)
	if recv.Codec().IsVideo() {
		recv.RequestKeyframe(t.mjr.layer, sfu.Now())
	}
	return t, nil
}

// Close takes the tracks off their receivers and closes the recording; it returns what it wrote
// and lost, and the first error (a full disk).
func (p *Participant) Close() (SessionStats, error) {
	for i, t := range p.tracks {
		p.recvs[i].RemoveSink(t)
	}
	err := p.s.Close()
	return p.s.Stats(), err
}
