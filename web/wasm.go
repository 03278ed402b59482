package web

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WASMPath is where the low-priority transfer module is served; lib/lowprio.js loads it.
const WASMPath = "/wasm/lowprio.wasm"

// wasmMissing is the 404's text for a generated file a build left out.
const wasmMissing = "this strata was built without its WebAssembly files (web/wasm/lowprio.wasm, wasm_exec.js): " +
	"run `make wasm` (make build does) and build strata again\n"

// missingWASM reports a request for one of the generated files of wasm/ that this build lacks.
func missingWASM(fsys fs.FS, path string) bool {
	name, ok := strings.CutPrefix(path, "/wasm/")
	if !ok || (name != "lowprio.wasm" && name != "wasm_exec.js") {
		return false
	}
	_, err := fs.Stat(fsys, "wasm/"+name)
	return err != nil
}

// gzipped serves one embedded file gzip-encoded to clients that accept it: the module is 2.9 MB
// and 0.8 MB gzipped. It is compressed once, on the first such request, since embedded files
// never change while strata runs.
type gzipped struct {
	fsys fs.FS
	name string
	once sync.Once
	body []byte // nil when the file could not be read
}

// serve answers r with the compressed file and reports true, or reports false (the client does
// not take gzip, or the file is missing) and leaves the answer to the caller.
func (g *gzipped) serve(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Add("Vary", "Accept-Encoding")
	if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		return false
	}
	g.once.Do(g.compress)
	if g.body == nil {
		return false
	}
	w.Header().Set("Content-Type", "application/wasm")
	w.Header().Set("Content-Encoding", "gzip")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(g.body))
	return true
}

func (g *gzipped) compress() {
	raw, err := fs.ReadFile(g.fsys, g.name)
	if err != nil {
		return
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
	_, _ = zw.Write(raw)                                     // writes to memory do not fail
	if zw.Close() == nil {
		g.body = buf.Bytes()
	}
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip (listed, or *, without q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if c := strings.TrimSpace(coding); c != "gzip" && c != "*" {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}
