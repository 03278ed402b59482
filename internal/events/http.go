package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
)

// HTTPPackage is the name Janus gives its HTTP event handler, which this one mirrors.
const HTTPPackage = "janus.eventhandler.sampleevh"

// HTTPHandler POSTs events to a web backend as Janus's sample event handler does: one JSON object
// per request, or with grouping a JSON array of up to 100, Content-Type application/json, optional
// basic authentication, and retries with exponential backoff after a failure. Unlike Janus, which
// only retries when the request could not be made, an answer other than 2xx is a failure too.
type HTTPHandler struct {
	*backend
	hs *httpSender
}

type httpSender struct {
	client *http.Client
	target atomic.Pointer[httpTarget]
}

// httpTarget is the backend address and credentials, replaced whole by a tweak.
type httpTarget struct {
	url            string
	user, password string
}

// NewHTTP starts an HTTP handler. The URL must be http:// or https://.
func NewHTTP(o Options, log *slog.Logger) (*HTTPHandler, error) {
	if err := checkURL(o.URL, "http", "https"); err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	hs := &httpSender{client: &http.Client{Timeout: o.Timeout}}
	hs.target.Store(&httpTarget{url: o.URL, user: o.User, password: o.Password})
	h := &HTTPHandler{backend: newBackend(o, hs, log), hs: hs}
	h.start()
	return h, nil
}

func (s *httpSender) send(ctx context.Context, payload []byte) error {
	t := s.target.Load()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.user != "" && t.password != "" {
		req.SetBasicAuth(t.user, t.password)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("backend answered %s", resp.Status)
	}
	return nil
}

func (s *httpSender) close() { s.client.CloseIdleConnections() }

// Stats implements Handler.
func (h *HTTPHandler) Stats() Stats { return h.stats() }

// Query implements Handler: Janus's sample handler's "tweak" (events, grouping, backend,
// backend_user, backend_pwd, max_retransmissions, retransmissions_backoff in ms), and strata's
// "stats".
func (h *HTTPHandler) Query(req json.RawMessage) any {
	return query(req, h.backend, h.Stats, func(t tweak) *queryError {
		if t.backend == nil && t.user == nil && t.password == nil {
			return nil
		}
		cur := *h.hs.target.Load()
		if t.backend != nil {
			if err := checkURL(*t.backend, "http", "https"); err != nil {
				return qerr(ErrInvalidElement, "Invalid HTTP URI '%s'", *t.backend)
			}
			cur.url = *t.backend
		}
		if t.user != nil {
			cur.user = *t.user
		}
		if t.password != nil {
			cur.password = *t.password
		}
		h.hs.target.Store(&cur)
		return nil
	})
}

// check validates the options both handlers share.
func (o Options) check() error {
	switch {
	case o.Name == "":
		return fmt.Errorf("event handler: no name")
	case o.Queue <= 0:
		return fmt.Errorf("event handler %s: queue must be positive", o.Name)
	case o.MaxRetransmissions < 0:
		return fmt.Errorf("event handler %s: max_retransmissions must not be negative", o.Name)
	case o.Backoff <= 0:
		return fmt.Errorf("event handler %s: retransmissions_backoff must be positive", o.Name)
	case o.Timeout <= 0:
		return fmt.Errorf("event handler %s: timeout must be positive", o.Name)
	}
	return nil
}
