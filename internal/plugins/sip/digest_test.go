package sip

import (
	"strings"
	"testing"

	"github.com/emiago/sipgo/sip"
	"github.com/icholy/digest"
)

// TestAuthorizeProxyChallenge: a 407 is answered in Proxy-Authorization, with RFC 2617's response
// for qop=auth, from the password or from its HA1 alike.
func TestAuthorizeProxyChallenge(t *testing.T) {
	for _, c := range []credentials{{user: "alice", secret: "secret"}, {user: "alice", ha1: md5hex("alice:strata.test:secret")}} {
		req := sip.NewRequest(sip.INVITE, sip.Uri{Scheme: "sip", User: "bob", Host: "example.com"})
		res := sip.NewResponseFromRequest(req, 407, "Proxy Authentication Required", nil)
		res.AppendHeader(sip.NewHeader("Proxy-Authenticate", `Digest realm="strata.test", nonce="abc", qop="auth,auth-int", algorithm=MD5`))
		if err := authorize(req, res, c); err != nil {
			t.Fatal(err)
		}
		if req.GetHeader("Authorization") != nil {
			t.Fatal("Authorization set for a 407")
		}
		h := req.GetHeader("Proxy-Authorization")
		if h == nil {
			t.Fatal("no Proxy-Authorization")
		}
		cred, err := digest.ParseCredentials(h.Value())
		if err != nil {
			t.Fatal(err)
		}
		ha1 := md5hex("alice:strata.test:secret")
		ha2 := md5hex("INVITE:sip:bob@example.com")
		want := md5hex(ha1 + ":abc:00000001:" + cred.Cnonce + ":auth:" + ha2)
		if cred.Response != want || cred.QOP != "auth" || cred.URI != "sip:bob@example.com" || !strings.EqualFold(cred.Username, "alice") {
			t.Errorf("credentials %+v, want response %s", cred, want)
		}
	}
	req := sip.NewRequest(sip.INVITE, sip.Uri{Scheme: "sip", Host: "example.com"})
	res := sip.NewResponseFromRequest(req, 401, "Unauthorized", nil)
	res.AppendHeader(sip.NewHeader("WWW-Authenticate", `Digest realm="r", nonce="n", algorithm=SHA-512-256`))
	if err := authorize(req, res, credentials{user: "a", secret: "b"}); err == nil {
		t.Error("an unsupported algorithm was answered")
	}
}
