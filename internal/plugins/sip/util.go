package sip

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"strconv"
	"strings"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// randomID is a random token for Call-IDs and tags.
func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// rawField is the raw JSON of a request's element (nil when absent).
func rawField(raw []byte, key string) json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	return top[key]
}

// uriTransport is a URI's transport parameter in lower case ("" when none).
func uriTransport(u sip.Uri) string {
	if u.UriParams == nil {
		return ""
	}
	t, _ := u.UriParams.Get("transport")
	return strings.ToLower(t)
}

// hostPort is where a proxy URI sends (5060 when it names no port).
func hostPort(u sip.Uri) string {
	port := u.Port
	if port == 0 {
		port = 5060
	}
	return net.JoinHostPort(u.Host, strconv.Itoa(port))
}

// incomingHeaders are the headers whose names start with one of the account's
// incoming_header_prefixes, as Janus reports them; nil when none are asked for.
func (s *session) incomingHeaders(hdrs []sip.Header) map[string]string {
	s.mu.Lock()
	prefixes := s.acct.prefixes
	s.mu.Unlock()
	if len(prefixes) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, h := range hdrs {
		for _, p := range prefixes {
			if p != "" && len(h.Name()) >= len(p) && strings.EqualFold(h.Name()[:len(p)], p) {
				out[h.Name()] = h.Value()
				break
			}
		}
	}
	return out
}

// withAuth sends an out-of-dialog request, answering one digest challenge.
func (s *session) withAuth(ctx context.Context, cli *sipgo.Client, req *sip.Request, c credentials) (*sip.Response, error) {
	res, err := cli.Do(ctx, req.Clone())
	if err != nil || !isChallenge(res) || !c.usable() {
		return res, err
	}
	again := req.Clone()
	again.RemoveHeader("Via")
	again.CSeq().SeqNo++
	if err := authorize(again, res, c); err != nil {
		return res, nil
	}
	return cli.Do(ctx, again)
}

// containsCrypto and containsSAVP read what an offer asks of SRTP, for incomingcall's srtp.
func containsCrypto(sdp string) bool { return strings.Contains(sdp, "a=crypto:") }
func containsSAVP(sdp string) bool   { return strings.Contains(sdp, "RTP/SAVP") }

// reasons are the phrases of the codes strata sends itself (RFC 3261 21).
var reasons = map[int]string{
	200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
	480: "Temporarily Unavailable", 481: "Call/Transaction Does Not Exist", 486: "Busy Here",
	487: "Request Terminated", 488: "Not Acceptable Here", 500: "Server Internal Error",
	503: "Service Unavailable", 600: "Busy Everywhere", 603: "Decline", 604: "Does Not Exist Anywhere",
	606: "Not Acceptable",
}

// reason is code's phrase ("Unknown" for one strata does not name).
func reason(code int) string {
	if r, ok := reasons[code]; ok {
		return r
	}
	return "Unknown"
}
