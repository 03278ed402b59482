package whip_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// FuzzRequests sends arbitrary methods, paths, headers and bodies to the WHIP/WHEP endpoints of
// one server: each gets a 2xx or 4xx (or 503) with a reason, never a 5xx, and the Janus API still
// answers afterwards.
func FuzzRequests(f *testing.F) {
	f.Add(uint8(0), "/whip/endpoint/1234", "application/sdp", "", "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\n")
	f.Add(uint8(1), "/whip/resource/abc", "application/trickle-ice-sdpfrag", "*", "a=end-of-candidates\r\n")
	f.Add(uint8(2), "/whep/resource/abc", "", "", "")
	f.Add(uint8(3), "/whep/endpoint/mountpoint/1", "", "", "")
	f.Add(uint8(0), "/whep/endpoint/1234/5", "application/sdp; charset=x", "", "m=video")
	f.Add(uint8(4), "/whip/endpoint/", "text/plain", "\"x\"", "\x00\xff")
	f.Add(uint8(0), "/whip/endpoint/1234", "application/sdp", "", fooOffer) // parses, reaches the videoroom, refused
	fuzzSrv := startServer(f, func(c *config.Config) { c.General.MaxMessageBytes = 16384 })
	f.Fuzz(func(t *testing.T, method uint8, path, ctype, ifMatch, body string) {
		if strings.ContainsAny(path, " ?#%\\") || !printable(path) {
			path = "/whip/endpoint/1234"
		}
		if !strings.HasPrefix(path, "/whip/") && !strings.HasPrefix(path, "/whep/") {
			path = "/whip/" + strings.TrimLeft(path, "/") // the rest of the listener is not WHIP's
		}
		m := []string{"POST", "PATCH", "DELETE", "OPTIONS", "GET", "PUT"}[int(method)%6]
		req, err := http.NewRequest(m, "http://"+fuzzSrv.HTTPAddr()+path, strings.NewReader(body))
		if err != nil {
			return
		}
		if ctype != "" && printable(ctype) {
			req.Header.Set("Content-Type", ctype)
		}
		if ifMatch != "" && printable(ifMatch) {
			req.Header.Set("If-Match", ifMatch)
		}
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		reason, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %s: %d %s", m, path, resp.StatusCode, reason)
		}
		if resp.StatusCode >= 400 && len(reason) == 0 && m != "HEAD" {
			t.Fatalf("%s %s: %d without a reason", m, path, resp.StatusCode)
		}
		if resp, err := http.Post("http://"+fuzzSrv.HTTPAddr()+"/janus", "application/json", strings.NewReader(`{"janus":"ping","transaction":"x"}`)); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("the Janus API stopped answering: %v", err)
		} else {
			resp.Body.Close()
		}
	})
}

// noRedirects shows the listener's own redirects (a path with "..": ServeMux cleans it) rather than
// following them off the WHIP handler.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// printable: a header value net/http's client sends (others it refuses before sending).
func printable(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
