package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/transport"
)

const (
	// forwardDialTimeout bounds connecting to another node: nodes are near each other, and a node
	// that does not accept a connection this fast is treated as failed.
	forwardDialTimeout = 3 * time.Second
	// forwardAnswerMargin is how long past its long-poll timeout another node may take to answer a
	// forwarded request (a held long-poll answers at the timeout; a plugin may take its time).
	forwardAnswerMargin = 30 * time.Second
	// failedPollDelay holds the answer to a long-poll whose node failed: janus.js polls again at once
	// and gives the session up after four failures, so the delay spreads those over a few seconds
	// — long enough for a node that only restarts its listener, or for the cluster to notice a
	// node that is gone (its sessions then get 404 here, as on the node itself).
	failedPollDelay = time.Second
)

// WithProxy makes the handler one node's Janus API in a cluster (docs/CLUSTER.md): a request whose
// path names a session another node holds (POST base/<s>[/<h>], GET base/<s>) is forwarded to that
// node, and a create this node refuses for want of capacity (472) is answered with HTTP 503, which
// makes janus.js try the next server in its list. nil: one node.
func WithProxy(p cluster.Proxy) Option {
	return func(h *Handler) {
		if p == nil {
			return
		}
		h.proxy = p
		h.fwd = &http.Transport{
			Proxy:                 nil, // node to node, never through the environment's proxy
			DialContext:           (&net.Dialer{Timeout: forwardDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   forwardDialTimeout,
			ResponseHeaderTimeout: h.longPoll + forwardAnswerMargin,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
		}
	}
}

// locate returns the node holding the session r names, when it is another node and r was not
// forwarded already. A GET of a handle's path is redirected to its session's path here first.
func (h *Handler) locate(r *http.Request, p transport.Path) (cluster.NodeRecord, bool) {
	if p.Session == 0 || r.Header.Get(transport.ProxiedHeader) != "" {
		return cluster.NodeRecord{}, false
	}
	if r.Method != http.MethodPost && (r.Method != http.MethodGet || p.Handle != 0) {
		return cluster.NodeRecord{}, false
	}
	return h.proxy.Locate(p.Session)
}

// postStatus is the HTTP status of a POST's reply: 200 as in Janus, but 503 for a create refused
// because the node takes no new sessions when it is part of a cluster, since janus.js tries its
// next server only when the HTTP request itself fails.
func (h *Handler) postStatus(p transport.Path, m janus.Message) int {
	if h.proxy != nil && p.Session == 0 && m.Error != nil && m.Error.Code == janus.ErrNotAcceptingSessions {
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}

// forward serves r from node, which holds the session r names: method, path below the node's
// API base, query and body are kept, with X-Forwarded-For and the loop guard added. A node that
// cannot be reached or fails midway gets the client a Janus error naming it.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, p transport.Path, node cluster.NodeRecord) {
	var body []byte
	if r.Method == http.MethodPost {
		var ok bool
		if body, ok = h.readBody(w, r, p); !ok {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	target, err := url.Parse(node.API)
	if err == nil && (target.Scheme != "http" && target.Scheme != "https" || target.Host == "") {
		err = errors.New("not an http(s) URL")
	}
	if err != nil {
		h.forwardFailed(w, r, p, body, node, node.API, err)
		return
	}
	rest := "/" + strconv.FormatUint(p.Session, 10)
	if p.Handle != 0 {
		rest += "/" + strconv.FormatUint(p.Handle, 10)
	}
	// A long-poll held at the other node ends with the client, or when this transport closes.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(h.closed, cancel)()
	rp := &httputil.ReverseProxy{
		Transport: h.fwd,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.URL.Path, pr.Out.URL.RawPath = strings.TrimRight(target.Path, "/")+rest, ""
			pr.Out.Host = target.Host
			pr.Out.Header.Set("X-Forwarded-For", transport.ForwardedFor(pr.In))
			pr.Out.Header.Set(transport.ProxiedHeader, "1")
		},
		// This node answered CORS already; the other node's headers would duplicate them.
		ModifyResponse: func(resp *http.Response) error {
			for _, k := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Vary"} {
				resp.Header.Del(k)
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.forwardFailed(w, r, p, body, node, target.String(), err)
		},
		ErrorLog: slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
	}
	rp.ServeHTTP(w, r.WithContext(ctx))
}

// forwardFailed answers a request that node could not serve. A POST gets 200 with the Janus error,
// as every Janus request error, so janus.js shows its reason; a long-poll gets 502 after
// failedPollDelay, which janus.js counts as a failed poll (four in a row: the server is lost).
func (h *Handler) forwardFailed(w http.ResponseWriter, r *http.Request, p transport.Path, body []byte, node cluster.NodeRecord, target string, err error) {
	select {
	case <-h.closing:
		if r.Method == http.MethodGet {
			transport.WriteJSON(w, http.StatusOK, janus.Encode(janus.Message{Janus: "keepalive"}))
		}
		return
	default:
	}
	if r.Context().Err() != nil {
		return // the client left
	}
	h.log.Warn("forwarding a request to the session's node failed", "session", p.Session, "node", node.ID, "url", target, "err", err)
	jerr := transport.ProxyFailed(p.Session, node, target, err)
	if r.Method == http.MethodPost {
		var tx struct {
			Transaction string `json:"transaction"`
		}
		_ = json.Unmarshal(body, &tx)
		transport.WriteJSON(w, http.StatusOK, janus.Encode(janus.ErrorReply(p.Session, tx.Transaction, jerr)))
		return
	}
	t := time.NewTimer(failedPollDelay)
	defer t.Stop()
	h.holdUntil(r, t.C)
	transport.WriteError(w, http.StatusBadGateway, p.Session, jerr)
}
