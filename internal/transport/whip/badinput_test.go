package whip_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// minimalOffer is an SDP that parses, with one video m-line of a codec no room takes.
const fooOffer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n" +
	"m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=sendonly\r\na=rtcp-mux\r\n" +
	"a=ice-ufrag:abcd\r\na=ice-pwd:0123456789abcdef0123456789\r\n" +
	"a=fingerprint:sha-256 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF\r\n" +
	"a=setup:actpass\r\na=rtpmap:96 FOO/90000\r\n"

// TestBadRequestsGetHTTPErrors sends what a broken or hostile client may: each gets its RFC 9725
// status and a reason, no session is left behind, and a good client publishes afterwards.
func TestBadRequestsGetHTTPErrors(t *testing.T) {
	srv := startServer(t, func(c *config.Config) {
		c.General.MaxMessageBytes = 8192
		c.Transports.HTTP.WHIP.Token = "s3cret"
	})
	base := "http://" + srv.HTTPAddr()
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	good := offerSDP(t)
	for _, c := range []struct {
		name, method, path, ctype, body string
		hdr                             map[string]string
		want                            int
	}{
		{"no token", "POST", "/whip/endpoint/1234", "application/sdp", good, nil, http.StatusUnauthorized},
		{"wrong token", "POST", "/whip/endpoint/1234", "application/sdp", good, map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"not a bearer", "POST", "/whip/endpoint/1234", "application/sdp", good, map[string]string{"Authorization": "Basic czNjcmV0"}, http.StatusUnauthorized},
		{"wrong content type", "POST", "/whip/endpoint/1234", "application/json", good, auth, http.StatusUnsupportedMediaType},
		{"no content type", "POST", "/whip/endpoint/1234", "", good, auth, http.StatusUnsupportedMediaType},
		{"not SDP", "POST", "/whip/endpoint/1234", "application/sdp", "hello", auth, http.StatusBadRequest},
		{"empty body", "POST", "/whip/endpoint/1234", "application/sdp", "", auth, http.StatusBadRequest},
		{"SDP without media", "POST", "/whip/endpoint/1234", "application/sdp", "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n", auth, http.StatusBadRequest},
		{"oversized", "POST", "/whip/endpoint/1234", "application/sdp", good + strings.Repeat("a=x-pad:0123456789\r\n", 600), auth, http.StatusRequestEntityTooLarge},
		{"unknown room", "POST", "/whip/endpoint/4321", "application/sdp", good, auth, http.StatusNotFound},
		{"room not a number", "POST", "/whip/endpoint/lobby", "application/sdp", good, auth, http.StatusNotFound},
		{"WHIP with a publisher", "POST", "/whip/endpoint/1234/7", "application/sdp", good, auth, http.StatusNotFound},
		{"WHEP with no publisher", "POST", "/whep/endpoint/1234", "application/sdp", good, auth, http.StatusNotFound},
		{"WHEP of an unknown publisher", "POST", "/whep/endpoint/1234/42", "application/sdp", good, auth, http.StatusNotFound},
		{"WHEP publisher not a number", "POST", "/whep/endpoint/1234/x", "application/sdp", good, auth, http.StatusNotFound},
		{"unknown mountpoint", "POST", "/whep/endpoint/mountpoint/999", "application/sdp", good, auth, http.StatusNotFound},
		{"a codec no room takes", "POST", "/whip/endpoint/1234", "application/sdp", fooOffer, auth, http.StatusUnprocessableEntity},
		{"GET an endpoint", "GET", "/whip/endpoint/1234", "", "", auth, http.StatusMethodNotAllowed},
		{"PUT a resource", "PUT", "/whip/resource/abc", "", "", auth, http.StatusMethodNotAllowed},
		{"unknown path", "POST", "/whip/bogus/1234", "application/sdp", good, auth, http.StatusNotFound},
		{"PATCH an unknown resource", "PATCH", "/whip/resource/abc", "application/trickle-ice-sdpfrag", "a=end-of-candidates\r\n", auth, http.StatusNotFound},
		{"PATCH without a token", "PATCH", "/whip/resource/abc", "application/trickle-ice-sdpfrag", "a=end-of-candidates\r\n", nil, http.StatusUnauthorized},
		{"DELETE an unknown resource", "DELETE", "/whep/resource/abc", "", "", auth, http.StatusNotFound},
	} {
		resp, body := do(t, c.method, base+c.path, c.ctype, c.body, c.hdr)
		if resp.StatusCode != c.want || strings.TrimSpace(body) == "" {
			t.Errorf("%s: %d %q, want %d with a reason", c.name, resp.StatusCode, body, c.want)
		}
		if c.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", c.name)
		}
		if c.want == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
			t.Errorf("%s: 405 without Allow", c.name)
		}
	}
	if n := srv.Gateway().SessionCount(); n != 0 {
		t.Errorf("%d sessions left behind by refused requests", n)
	}

	// A CORS preflight carries no credentials and is answered.
	resp, _ := do(t, "OPTIONS", base+"/whip/endpoint/1234", "", "", map[string]string{"Origin": "https://page.example",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") || resp.Header.Get("Accept-Post") != "application/sdp" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}

	// A resource refuses bad PATCHes and keeps working.
	pub := newWHIPClient(t)
	resp, answer := do(t, "POST", base+"/whip/endpoint/1234", "application/sdp", pub.offer(t), auth)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("good POST after the bad ones: %d %s", resp.StatusCode, answer)
	}
	loc := base + resp.Header.Get("Location")
	for _, c := range []struct {
		name, ctype, body string
		hdr               map[string]string
		want              int
	}{
		{"SDP instead of sdpfrag", "application/sdp", "a=end-of-candidates\r\n", nil, http.StatusUnsupportedMediaType},
		{"garbage", "application/trickle-ice-sdpfrag", "garbage", nil, http.StatusBadRequest},
		{"bad candidate", "application/trickle-ice-sdpfrag", "m=audio 9 RTP/AVP 0\r\na=mid:0\r\na=candidate:1 1 udp x 127.0.0.1 9 typ host\r\n", nil, http.StatusBadRequest},
		{"candidate outside a media section", "application/trickle-ice-sdpfrag", "a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n", nil, http.StatusBadRequest},
		{"ufrag without pwd", "application/trickle-ice-sdpfrag", "a=ice-ufrag:abcd\r\n", nil, http.StatusBadRequest},
		{"stale If-Match", "application/trickle-ice-sdpfrag", "a=end-of-candidates\r\n", map[string]string{"If-Match": `"old"`}, http.StatusPreconditionFailed},
	} {
		hdr := map[string]string{"Authorization": "Bearer s3cret"}
		for k, v := range c.hdr {
			hdr[k] = v
		}
		if resp, body := do(t, "PATCH", loc, c.ctype, c.body, hdr); resp.StatusCode != c.want {
			t.Errorf("PATCH %s: %d %q, want %d", c.name, resp.StatusCode, body, c.want)
		}
	}
	frag := "a=ice-ufrag:" + ufragOf(pub.pc.LocalDescription().SDP) + "\r\na=ice-pwd:" + pwdOf(pub.pc.LocalDescription().SDP) + "\r\nm=audio 9 RTP/AVP 0\r\na=mid:0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host\r\na=end-of-candidates\r\n"
	if resp, body := do(t, "PATCH", loc, "application/trickle-ice-sdpfrag", frag, auth); resp.StatusCode != http.StatusNoContent {
		t.Errorf("good trickle after the bad ones: %d %q", resp.StatusCode, body)
	}
	if resp, _ := do(t, "DELETE", loc, "", "", auth); resp.StatusCode != http.StatusOK {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
}

// TestBearerFromTheJanusAPITokens: without a WHIP token, the Janus API's token_auth tokens (and its
// api_secret) are what a WHIP client must bring.
func TestBearerFromTheJanusAPITokens(t *testing.T) {
	srv := startServer(t, func(c *config.Config) {
		c.General.TokenAuth = true
		c.General.Tokens = []string{"tok1"}
		c.Transports.Admin.Enabled, c.Transports.Admin.Listen = true, "127.0.0.1:0"
	})
	base := "http://" + srv.HTTPAddr()
	if resp, _ := do(t, "POST", base+"/whip/endpoint/1234", "application/sdp", offerSDP(t), nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no bearer with token_auth: %d, want 401", resp.StatusCode)
	}
	pub := newWHIPClient(t)
	if resp, body := do(t, "POST", base+"/whip/endpoint/1234", "application/sdp", pub.offer(t), map[string]string{"Authorization": "Bearer tok1"}); resp.StatusCode != http.StatusCreated {
		t.Errorf("a token_auth token as bearer: %d %s, want 201", resp.StatusCode, body)
	}
	// A token the admin API limited to the echotest may not publish into a videoroom.
	add := `{"janus":"add_token","token":"echo-only","plugins":["janus.plugin.echotest"],"transaction":"t","admin_secret":"` + srv.AdminSecret() + `"}`
	if resp, body := do(t, "POST", "http://"+srv.AdminAddr()+"/admin", "application/json", add, nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"success"`) {
		t.Fatalf("add_token: %d %s", resp.StatusCode, body)
	}
	other := newWHIPClient(t)
	if resp, body := do(t, "POST", base+"/whip/endpoint/1234", "application/sdp", other.offer(t), map[string]string{"Authorization": "Bearer echo-only"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a token limited to the echotest: %d %s, want 403", resp.StatusCode, body)
	}
}
