package streaming

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

var errNoMedia = errors.New("the stream has no media to record")

// confine resolves p inside base: a relative path is taken inside it, an absolute one must lie
// within it (Janus writes wherever the request says, as the server's user).
func confine(base, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	abs, err := filepath.Abs(filepath.Clean(p))
	if err != nil {
		return "", err
	}
	root, err := filepath.Abs(base)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside %s", p, root)
	}
	return abs, nil
}
