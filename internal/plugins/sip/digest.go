package sip

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/emiago/sipgo/sip"
	"github.com/icholy/digest"
)

// credentials answer a registrar's or proxy's digest challenge: the password, or its HA1
// (MD5(user:realm:password), Janus's ha1_secret) when the application does not hand the password over.
type credentials struct {
	user   string // authuser, or the URI's user part
	secret string
	ha1    string
}

func (c credentials) usable() bool { return c.secret != "" || c.ha1 != "" }

// authorize adds the Authorization (401) or Proxy-Authorization (407) answering res's challenge to
// req. Only MD5 is answered, with qop=auth when offered, as Janus's stack does.
func authorize(req *sip.Request, res *sip.Response, c credentials) error {
	hdr, out := "WWW-Authenticate", "Authorization"
	if res.StatusCode == sip.StatusProxyAuthRequired {
		hdr, out = "Proxy-Authenticate", "Proxy-Authorization"
	}
	h := res.GetHeader(hdr)
	if h == nil {
		return fmt.Errorf("%d without %s", res.StatusCode, hdr)
	}
	chal, err := digest.ParseChallenge(h.Value())
	if err != nil {
		return fmt.Errorf("%s: %w", hdr, err)
	}
	if chal.Algorithm != "" && !strings.EqualFold(chal.Algorithm, "MD5") {
		return fmt.Errorf("digest algorithm %s is not supported", chal.Algorithm)
	}
	ha1 := c.ha1
	if ha1 == "" {
		ha1 = md5hex(c.user + ":" + chal.Realm + ":" + c.secret)
	}
	uri := req.Recipient.String()
	ha2 := md5hex(string(req.Method) + ":" + uri)
	cred := digest.Credentials{
		Username: c.user, Realm: chal.Realm, Nonce: chal.Nonce, URI: uri, Algorithm: chal.Algorithm,
		Opaque: chal.Opaque,
	}
	if chal.SupportsQOP("auth") {
		cred.QOP, cred.Nc, cred.Cnonce = "auth", 1, cnonce()
		cred.Response = md5hex(fmt.Sprintf("%s:%s:%08x:%s:auth:%s", ha1, chal.Nonce, cred.Nc, cred.Cnonce, ha2))
	} else {
		cred.Response = md5hex(ha1 + ":" + chal.Nonce + ":" + ha2)
	}
	req.RemoveHeader(out)
	req.AppendHeader(sip.NewHeader(out, cred.String()))
	return nil
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func cnonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// isChallenge says whether res asks for credentials.
func isChallenge(res *sip.Response) bool {
	return res.StatusCode == sip.StatusUnauthorized || res.StatusCode == sip.StatusProxyAuthRequired
}
