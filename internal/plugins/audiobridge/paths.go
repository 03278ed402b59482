package audiobridge

import "github.com/strata-rtc/strata/internal/record"

// Janus writes recordings and reads announcements wherever a request names, as the server's user.
// strata confines them: recordings (record_dir, record_file, mjrs_dir, filename) to
// plugins.audiobridge.recordings_dir and play_file to plugins.audiobridge.files_dir. A relative path
// is taken inside the directory; an absolute one must lie within it.

// confined resolves p (joined onto dir, when given) inside base, or reports that it leaves it.
func confined(base, dir, p string) (string, *Error) {
	abs, err := record.Confine(base, dir, p)
	if err != nil {
		return "", errorf(ErrInvalid, "Invalid path (%v)", err)
	}
	return abs, nil
}
