package service

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"

	"github.com/strata-rtc/strata/internal/lowprio/dc"
)

// Errors a transfer is refused or ended with; their text is the RESET's reason.
var (
	errNoFiles    = errors.New("no files are served here, only gen:<bytes>")
	errNotFound   = errors.New("no such file")
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("upload larger than the server's max_upload")
)

// openRoot opens a configured directory ("" gives nil: the directory is not served). Names are
// resolved inside an os.Root, so neither ".." nor a symbolic link can lead out of it.
func openRoot(dir string) (*os.Root, error) {
	if dir == "" {
		return nil, nil
	}
	return os.OpenRoot(dir)
}

// openFile opens name under root for a get: a regular file, and its size.
func openFile(root *os.Root, name string) (*os.File, int64, error) {
	if root == nil {
		return nil, 0, errNoFiles
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, 0, fileError(err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, fileError(err)
	}
	return f, st.Size(), nil
}

// fileError words a file system error for the peer without the server's paths.
func fileError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errNotFound
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	case errors.Is(err, errNotRegular):
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err // os.Root's own errors ("path escapes from parent") name no server path
	}
	return err
}

// upload is where a put's bytes go: a temporary file under the upload directory renamed to its
// name when complete, nothing (counted and discarded), or a comparison with the generated stream
// gen:<bytes> (a client checking that its uploads arrive intact). Writes past max fail.
type upload struct {
	root      *os.Root
	f         *os.File
	tmp, name string
	verify    *dc.Verifier // gen:<bytes>
	n, max    int64
}

// newUpload prepares the destination of a put of name.
func newUpload(root *os.Root, name string, max int64) (*upload, error) {
	u := &upload{root: root, name: name, max: max}
	if n, ok, err := dc.ParseGenerated(name); ok {
		if err != nil {
			return nil, err
		}
		if n > max {
			return nil, errTooLarge
		}
		u.verify = &dc.Verifier{N: n}
		return u, nil
	}
	if root == nil {
		return u, nil
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	dir, base := path.Split(name)
	u.tmp = dir + "." + base + ".lowprio-" + hex.EncodeToString(suffix[:])
	f, err := root.OpenFile(u.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fileError(err)
	}
	u.f = f
	return u, nil
}

func (u *upload) Write(p []byte) (int, error) {
	if u.n+int64(len(p)) > u.max {
		return 0, errTooLarge
	}
	if u.verify != nil {
		if _, err := u.verify.Write(p); err != nil {
			return 0, err
		}
	}
	if u.f != nil {
		if _, err := u.f.Write(p); err != nil {
			return 0, fileError(err)
		}
	}
	u.n += int64(len(p))
	return len(p), nil
}

// commit ends a complete upload: the file takes its name (replacing one of that name), or the
// generated stream's length is checked.
func (u *upload) commit() error {
	if u.verify != nil {
		return u.verify.Check()
	}
	if u.f == nil {
		return nil
	}
	err := u.f.Close()
	u.f = nil
	if err == nil {
		err = u.root.Rename(u.tmp, u.name)
	}
	if err != nil {
		_ = u.root.Remove(u.tmp)
		return fileError(err)
	}
	return nil
}

// abort removes what an ended upload wrote.
func (u *upload) abort() {
	if u.f == nil {
		return
	}
	_ = u.f.Close()
	u.f = nil
	_ = u.root.Remove(u.tmp)
}
