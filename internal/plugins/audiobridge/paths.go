package audiobridge

import (
	"path/filepath"
	"strings"
)

// Janus writes recordings and reads announcements wherever a request names, as the server's user.
// strata confines them: recordings (record_dir, record_file, mjrs_dir, filename) to
// plugins.audiobridge.recordings_dir and play_file to plugins.audiobridge.files_dir. A relative path
// is taken inside the directory; an absolute one must lie within it.

// confined resolves p (joined onto dir, when given) inside base, or reports that it leaves it.
func confined(base, dir, p string) (string, *Error) {
	if dir != "" && !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	abs, err := filepath.Abs(filepath.Clean(p))
	if err != nil {
		return "", errorf(ErrInvalid, "Invalid path (%s)", p)
	}
	root, err := filepath.Abs(base)
	if err != nil {
		return "", errorf(ErrUnknown, "Invalid configured directory (%s)", base)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errorf(ErrInvalid, "Invalid path (%s is outside %s)", p, root)
	}
	return abs, nil
}
