// Package web embeds strata's browser side: the client library (lib/strata.js and its modules), the
// demo pages and their stylesheet, and the low-priority transfer protocol compiled to WebAssembly
// (wasm/, written by `make wasm`). The HTTP transport serves them at "/", next to the Janus API.
//
// The pages find the API on their own (see lib/server.js and docs/CLIENT.md); the one thing they
// cannot guess is the WebSocket port, which strata reports at /strata-config.json through
// HandlerWithConfig.
package web

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
)

//go:embed *.html css lib demos wasm
var content embed.FS

// ConfigPath is where HandlerWithConfig serves the client configuration.
const ConfigPath = "/strata-config.json"

// FS returns the embedded files, rooted so that "index.html" is at the top.
func FS() fs.FS { return content }

// Handler serves the embedded files, and at ConfigPath an empty client configuration, so the pages
// use their defaults (see lib/server.js) without a 404 in the browser console. Servers that know their
// WebSocket port should mount HandlerWithConfig instead.
func Handler() http.Handler {
	return HandlerWithConfig(func() ClientConfig { return ClientConfig{} })
}

// ClientConfig is what the pages read from /strata-config.json.
type ClientConfig struct {
	// JanusPath is the path of the HTTP API on the pages' own origin, e.g. "/janus".
	JanusPath string `json:"janus_path,omitempty"`
	// WebSocketPort is the port of the `janus-protocol` WebSocket transport; 0 when it is off.
	WebSocketPort int `json:"ws_port,omitempty"`
	// WSSPort is the port of the secure WebSocket (wss://), used by pages served over https://; 0
	// when it is off.
	WSSPort int `json:"wss_port,omitempty"`
	// HTTPSPort is the port of the HTTPS listener (API and pages); a page opened over plain http from
	// another machine points the user there. 0 when it is off.
	HTTPSPort int `json:"https_port,omitempty"`
}

// HandlerWithConfig serves the embedded files and, at ConfigPath, the configuration get returns. get
// is called on every request, so it can report ports that are only known once the listeners are
// bound. Files carry Cache-Control: no-cache so that a browser revalidates after an upgrade instead
// of mixing old and new modules.
func HandlerWithConfig(get func() ClientConfig) http.Handler { return handler(content, get) }

func handler(fsys fs.FS, get func() ClientConfig) http.Handler {
	files := http.FileServerFS(fsys)
	module := &gzipped{fsys: fsys, name: "wasm/lowprio.wasm"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.URL.Path == ConfigPath {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			_ = json.NewEncoder(w).Encode(get())
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		if missingWASM(fsys, r.URL.Path) {
			http.Error(w, wasmMissing, http.StatusNotFound)
			return
		}
		if r.URL.Path == WASMPath && module.serve(w, r) {
			return
		}
		files.ServeHTTP(w, r)
	})
}
