package voicemail

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// Whatever path a client asks for, the handler serves nothing but a message's own file: the
// directory holds a message, a .mjr and a secret next to it, and a file outside it.
func FuzzHandlerServesOnlyMessages(f *testing.F) {
	for _, s := range []string{"/vm/janus-voicemail-1.opus", "/vm/", "/vm/x.mjr", "/vm/../secret", "/vm/%2e%2e/secret",
		"/vm/janus-voicemail-1.opus/", "/vm//janus-voicemail-1.opus", "/vm/janus-voicemail-1.mjr", "/secret"} {
		f.Add(s)
	}
	root := f.TempDir()
	dir := filepath.Join(root, "vm")
	for name, body := range map[string]string{
		filepath.Join(dir, "janus-voicemail-1.opus"): "OggS message", filepath.Join(dir, "janus-voicemail-1.mjr"): "MJR00002",
		filepath.Join(dir, "secret"): "TOP-SECRET", filepath.Join(root, "secret"): "TOP-SECRET",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	p := New(config.VoiceMail{Path: dir, Base: "/vm/"}, nil)
	mux := http.NewServeMux()
	mux.Handle(p.Pattern(), p.Handler())
	f.Fuzz(func(t *testing.T, path string) {
		req := httptest.NewRequest(http.MethodGet, "http://strata/", nil)
		req.URL.Path = path
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		if w.Code == http.StatusOK && w.Body.String() != "OggS message" {
			t.Fatalf("GET %q served %q", path, w.Body.String())
		}
		if strings.Contains(w.Body.String(), "TOP-SECRET") || strings.Contains(w.Body.String(), "MJR00002") {
			t.Fatalf("GET %q: %d %q", path, w.Code, w.Body.String())
		}
	})
}

func TestURL(t *testing.T) {
	for base, want := range map[string][2]string{
		"/voicemail/":             {"/voicemail/janus-voicemail-7.opus", "/voicemail/"},
		"/voicemail":              {"/voicemail/janus-voicemail-7.opus", "/voicemail/"},
		"https://example.com/vm/": {"https://example.com/vm/janus-voicemail-7.opus", "/vm/"},
	} {
		p := New(config.VoiceMail{Base: base}, nil)
		if got := p.URL(messageName(7)); got != want[0] || p.Pattern() != want[1] {
			t.Errorf("base %q: URL %q, pattern %q; want %q", base, got, p.Pattern(), want)
		}
	}
}
