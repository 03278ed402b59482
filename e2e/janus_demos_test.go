package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// janusDemosDir is where Debian's janus-demos package installs Janus's own demo pages; its
// javascript/ links to /usr/share/javascript, where janus.js, jQuery and Bootstrap are.
const janusDemosDir = "/usr/share/janus/demos"

// serveJanusDemos serves Janus's demo pages, unmodified, from a test-local HTTP server (another
// origin than strata's API, as when the demos have their own web server), with two files replaced:
//
//   - settings.js gets the two fixes Debian's copy needs to run at all (iceServers null makes
//     Debian's janus.js refuse to start; token and apisecret are used but never declared) and the
//     address of strata's Janus API, which the stock file guesses as <page host>:8088;
//   - every path in files is served with the given content instead (adminconfig.js, say).
func serveJanusDemos(t *testing.T, api string, files map[string]string) *httptest.Server {
	t.Helper()
	stock, err := os.ReadFile(janusDemosDir + "/settings.js")
	if err != nil {
		t.Fatalf("Janus's demo pages are required in %s but are missing (%v).\n"+
			"Run `make test`: it installs Debian's janus-demos package and then runs the tests.", janusDemosDir, err)
	}
	settings := strings.Replace(string(stock), "var iceServers = null;", "var iceServers = [];", 1)
	if settings == string(stock) {
		t.Fatalf("%s/settings.js no longer has the line the test fixes: check the janus-demos version", janusDemosDir)
	}
	settings += fmt.Sprintf("\nvar token = null;\nvar apisecret = null;\nserver = %q;\n", api)

	mux := http.NewServeMux()
	demos := http.FileServer(http.Dir(janusDemosDir))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		content, replaced := files[r.URL.Path]
		if r.URL.Path == "/settings.js" {
			content, replaced = settings, true
		}
		if !replaced {
			demos.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(content))
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}
