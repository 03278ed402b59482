package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func get(t *testing.T, h http.Handler, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Result()
}

func TestHandlerServesPagesAndModules(t *testing.T) {
	h := Handler()
	cases := []struct {
		path, contentType, contains string
	}{
		{"/", "text/html", "demos/list.js"},
		{"/echotest.html", "text/html", "demos/echotest.js"},
		{"/lib/strata.js", "text/javascript", "export async function connect"},
		{"/css/strata.css", "text/css", ".videos"},
	}
	for _, c := range cases {
		res := get(t, h, c.path)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", c.path, res.StatusCode)
			continue
		}
		// Browsers refuse to run an ES module served with a non-JavaScript MIME type.
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, c.contentType) {
			t.Errorf("%s: Content-Type %q, want %s", c.path, ct, c.contentType)
		}
		if !strings.Contains(string(body), c.contains) {
			t.Errorf("%s: body lacks %q", c.path, c.contains)
		}
		if res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: Cache-Control %q", c.path, res.Header.Get("Cache-Control"))
		}
	}
	if res := get(t, h, "/nope.js"); res.StatusCode != http.StatusNotFound {
		t.Errorf("missing file: status %d, want 404", res.StatusCode)
	}
	// Without a configuration the pages still get a (empty) config file, so no 404 is logged.
	res := get(t, h, ConfigPath)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "{}" {
		t.Errorf("%s: status %d body %q, want 200 {}", ConfigPath, res.StatusCode, body)
	}
}

func TestHandlerWithConfigReportsLivePort(t *testing.T) {
	port := 8188
	h := HandlerWithConfig(func() ClientConfig { return ClientConfig{JanusPath: "/janus", WebSocketPort: port} })
	port = 40123 // the getter runs per request, so a port bound after construction is reported
	res := get(t, h, ConfigPath)
	var cc ClientConfig
	if err := json.NewDecoder(res.Body).Decode(&cc); err != nil {
		t.Fatal(err)
	}
	if cc.WebSocketPort != 40123 || cc.JanusPath != "/janus" {
		t.Fatalf("got %+v", cc)
	}
	if res := get(t, h, "/echotest.html"); res.StatusCode != http.StatusOK {
		t.Fatalf("pages not served next to the config: %d", res.StatusCode)
	}
}

// Every demo listed on the index page must exist, and every module a page imports must be embedded.
func TestDemoLinksAndImportsResolve(t *testing.T) {
	list, err := fs.ReadFile(FS(), "demos/list.js")
	if err != nil {
		t.Fatal(err)
	}
	hrefs := regexp.MustCompile(`href:\s*'([^']+)'`).FindAllStringSubmatch(string(list), -1)
	if len(hrefs) == 0 {
		t.Fatal("no demos listed")
	}
	for _, m := range hrefs {
		if _, err := fs.Stat(FS(), m[1]); err != nil {
			t.Errorf("listed demo %s: %v", m[1], err)
		}
	}
	imports := regexp.MustCompile(`(?:from|import)\s+'(\.{1,2}/[^']+)'`)
	err = fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".js") {
			return err
		}
		src, _ := fs.ReadFile(FS(), path)
		dir := path[:strings.LastIndex(path, "/")+1]
		for _, m := range imports.FindAllStringSubmatch(string(src), -1) {
			target := cleanJoin(dir, m[1])
			if _, err := fs.Stat(FS(), target); err != nil {
				t.Errorf("%s imports %s: %v", path, m[1], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func cleanJoin(dir, rel string) string {
	parts := strings.Split(strings.TrimSuffix(dir, "/"), "/")
	if dir == "" {
		parts = nil
	}
	for _, p := range strings.Split(rel, "/") {
		switch p {
		case ".":
		case "..":
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

// The WebAssembly module is served as application/wasm (WebAssembly.instantiateStreaming refuses
// anything else) with the Go runtime's JavaScript beside it. `make wasm` writes both; `make test`
// runs it first.
func TestHandlerServesWASM(t *testing.T) {
	h := Handler()
	res := get(t, h, WASMPath)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d %q (run `make wasm`)", WASMPath, res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/wasm" {
		t.Errorf("%s: Content-Type %q, want application/wasm", WASMPath, ct)
	}
	if !strings.HasPrefix(string(body), "\x00asm") {
		t.Errorf("%s: not a WebAssembly module (starts %q)", WASMPath, body[:min(len(body), 8)])
	}
	res = get(t, h, "/wasm/wasm_exec.js")
	body, _ = io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "globalThis.Go") {
		t.Errorf("/wasm/wasm_exec.js: status %d, or not Go's wasm_exec.js", res.StatusCode)
	}
}

// A build without the generated files says what to do instead of a bare 404.
func TestHandlerExplainsMissingWASM(t *testing.T) {
	h := handler(fstest.MapFS{"wasm/README.md": {Data: []byte("x")}}, func() ClientConfig { return ClientConfig{} })
	for _, path := range []string{WASMPath, "/wasm/wasm_exec.js"} {
		res := get(t, h, path)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "make wasm") {
			t.Errorf("%s without the file: status %d %q, want 404 naming `make wasm`", path, res.StatusCode, body)
		}
	}
	if res := get(t, h, "/wasm/other.wasm"); res.StatusCode != http.StatusNotFound {
		t.Errorf("/wasm/other.wasm: status %d, want 404", res.StatusCode)
	}
}

// A client that takes gzip gets the module compressed (0.8 MB instead of 2.9), and the same bytes
// once decompressed; one that does not, or refuses gzip with q=0, gets it as it is.
func TestHandlerGzipsWASM(t *testing.T) {
	module := bytes.Repeat([]byte("\x00asm\x01\x00\x00\x00 a module compresses well "), 4096)
	h := handler(fstest.MapFS{"wasm/lowprio.wasm": {Data: module}, "wasm/wasm_exec.js": {Data: []byte("x")}},
		func() ClientConfig { return ClientConfig{} })
	for _, c := range []struct {
		accept string
		gzip   bool
	}{{"gzip, deflate, br, zstd", true}, {"br;q=1.0, gzip;q=0.5", true}, {"*", true}, {"", false},
		{"gzip;q=0", false}, {"deflate", false}} {
		req := httptest.NewRequest(http.MethodGet, WASMPath, nil)
		req.Header.Set("Accept-Encoding", c.accept)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/wasm" {
			t.Errorf("Accept-Encoding %q: status %d, Content-Type %q", c.accept, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if got := res.Header.Get("Content-Encoding") == "gzip"; got != c.gzip {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", c.accept, got, c.gzip)
		}
		if res.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary %q", c.accept, res.Header.Get("Vary"))
		}
		if c.gzip {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(body, module) {
			t.Errorf("Accept-Encoding %q: %d bytes, not the module's %d", c.accept, len(body), len(module))
		}
	}
}
