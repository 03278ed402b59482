package service

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/lowprio/dc"
)

// generatedPrefix names a generated stream: gen:<bytes>.
const generatedPrefix = "gen:"

// Errors a transfer is refused or ended with; their text is the RESET's reason.
var (
	errNoFiles     = errors.New("no files are served here, only gen:<bytes>")
	errNotFound    = errors.New("no such file")
	errNotRegular  = errors.New("not a regular file")
	errTooLarge    = errors.New("upload larger than the server's max_upload")
	errShort       = errors.New("upload shorter than its gen:<bytes> length")
	errLong        = errors.New("upload longer than its gen:<bytes> length")
	errBadGenerate = errors.New("gen:<bytes> needs a decimal byte count")
)

// generated reports whether name is gen:<bytes>, and the byte count.
func generated(name string) (n int64, ok bool, err error) {
	digits, ok := strings.CutPrefix(name, generatedPrefix)
	if !ok {
		return 0, false, nil
	}
	n, err = strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 || digits == "" || digits[0] == '+' {
		return 0, true, errBadGenerate
	}
	return n, true, nil
}

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
	verify    io.Reader // gen:<bytes>: what must arrive
	want      int64     // gen:<bytes>: how much
	n, max    int64
	cmp       []byte
}

// newUpload prepares the destination of a put of name.
func newUpload(root *os.Root, name string, max int64) (*upload, error) {
	u := &upload{root: root, name: name, max: max}
	if n, ok, err := generated(name); ok {
		if err != nil {
			return nil, err
		}
		if n > max {
			return nil, errTooLarge
		}
		u.verify, u.want, u.cmp = dc.Generated(n), n, make([]byte, 16<<10)
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
		if err := u.compare(p); err != nil {
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

// compare checks p against the generated stream at the upload's offset.
func (u *upload) compare(p []byte) error {
	for off := 0; off < len(p); {
		want := u.cmp[:min(len(u.cmp), len(p)-off)]
		k, err := io.ReadFull(u.verify, want)
		for i := range k {
			if p[off+i] != want[i] {
				return fmt.Errorf("byte %d differs from gen:%d", u.n+int64(off+i), u.want)
			}
		}
		if err != nil {
			return errLong
		}
		off += k
	}
	return nil
}

// commit ends a complete upload: the file takes its name (replacing one of that name).
func (u *upload) commit() error {
	if u.verify != nil && u.n != u.want {
		return errShort
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
