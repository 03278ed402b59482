package voicemail

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// fileName is the only kind of name the plugin writes and serves (compiled on first use, not at
// every strata command's start-up).
var fileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^janus-voicemail-[0-9]{1,20}\.opus$`) })

// messageName is the file of a recording id.
func messageName(id uint64) string { return fmt.Sprintf("janus-voicemail-%d.opus", id) }

// URL is the address the "done" event gives for a message: base, then the file name (Janus
// joins them with a "/" whatever base ends with; strata does not double it).
func (p *Plugin) URL(name string) string {
	return strings.TrimSuffix(p.cfg.Base, "/") + "/" + name
}

// Pattern is where Handler is mounted on the HTTP listener: base's path, as a subtree.
func (p *Plugin) Pattern() string { return strings.TrimSuffix(p.cfg.BasePath(), "/") + "/" }

// Handler serves the messages at base: GET or HEAD of <base>/janus-voicemail-<id>.opus, nothing
// else of the directory (no listing, no other names, so no path can reach outside it).
func (p *Plugin) Handler() http.Handler {
	prefix := p.Pattern()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || !fileName().MatchString(name) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "audio/ogg")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.ServeFile(w, r, filepath.Join(p.cfg.Path, name))
	})
}
