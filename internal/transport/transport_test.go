package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/janus"
)

func TestParsePath(t *testing.T) {
	cases := []struct {
		path     string
		ok       bool
		sid, hid uint64
		info     bool
		code     janus.Code
	}{
		{"/janus", true, 0, 0, false, 0},
		{"/janus/", true, 0, 0, false, 0},
		{"/janus/info", true, 0, 0, true, 0},
		{"/janus/12", true, 12, 0, false, 0},
		{"/janus/12/34/", true, 12, 34, false, 0},
		{"/janus/x", true, 0, 0, false, janus.ErrSessionNotFound},
		{"/janus/0", true, 0, 0, false, janus.ErrSessionNotFound},
		{"/janus/12/-1", true, 12, 0, false, janus.ErrHandleNotFound},
		{"/janus/1/2/3", true, 0, 0, false, janus.ErrInvalidRequestPath},
		{"/janusx", false, 0, 0, false, 0},
		{"/other", false, 0, 0, false, 0},
	}
	for _, c := range cases {
		p, ok, jerr := ParsePath("/janus/", c.path)
		if ok != c.ok || (jerr == nil) != (c.code == 0) || (jerr != nil && jerr.Code != c.code) {
			t.Fatalf("%s: ok=%v err=%v", c.path, ok, jerr)
		}
		if jerr == nil && ok && (p.Session != c.sid || p.Handle != c.hid || p.Info != c.info) {
			t.Fatalf("%s: %+v", c.path, p)
		}
	}
}

func TestCORSEchoesRequestHeaders(t *testing.T) {
	r := httptest.NewRequest(http.MethodOptions, "/janus", nil)
	r.Header.Set("Access-Control-Request-Headers", "content-type")
	w := httptest.NewRecorder()
	CORS(w, r, "*")
	if w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Access-Control-Allow-Headers") != "content-type" {
		t.Fatalf("headers: %v", w.Header())
	}
	w = httptest.NewRecorder()
	CORS(w, r, "")
	if len(w.Header()) != 0 {
		t.Fatalf("CORS disabled but headers set: %v", w.Header())
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/janus", "/janus/1/2", "/janus/info", "/janus//", "/janus/18446744073709551616", "/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, ok, jerr := ParsePath("/janus", path)
		if !ok && (jerr != nil || p != (Path{})) {
			t.Fatalf("%q: not below base but parsed", path)
		}
		if ok && !strings.HasPrefix(path, "/janus") {
			t.Fatalf("%q accepted outside base", path)
		}
		if jerr == nil && p.Handle != 0 && p.Session == 0 {
			t.Fatalf("%q: handle without session", path)
		}
	})
}
