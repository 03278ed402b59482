// Package client is the Go client of the network controller's HTTP API (strata netctl): the SFU
// registers its streams and subscriptions with it and watches the decisions, and the agent posts
// interface counters.
//
// Errors: when the controller cannot be reached (connection refused, timeout, a proxy's 502/503/
// 504) calls return an error that matches ErrUnreachable with errors.Is, so that the SFU can fall
// back to its own bandwidth estimate; when the controller refuses a request, an *APIError with the
// HTTP status and the API's error code.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/api"
)

// ErrUnreachable is matched (errors.Is) by every error caused by not reaching the controller.
var ErrUnreachable = errors.New("netctl controller unreachable")

// unreachable wraps a transport error so that it matches ErrUnreachable and keeps its cause.
type unreachable struct{ cause error }

func (u *unreachable) Error() string        { return ErrUnreachable.Error() + ": " + u.cause.Error() }
func (u *unreachable) Is(target error) bool { return target == ErrUnreachable }
func (u *unreachable) Unwrap() error        { return u.cause }

// APIError is a request the controller answered with an error.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("netctl: %s (HTTP %d, %s)", e.Message, e.Status, e.Code)
}

// Client talks to one controller. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	hc      *http.Client
	timeout time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (its Timeout must be zero, or the decision stream is cut).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithTimeout bounds each request other than the decision stream (default 3 s).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// New returns a client for the controller at baseURL (e.g. "http://127.0.0.1:9080").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("netctl client: %q is not an http(s) URL", baseURL)
	}
	c := &Client{base: u, hc: &http.Client{}, timeout: 3 * time.Second}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// URL returns the absolute URL of an API path such as "/v1/links".
func (c *Client) URL(path string) string { return c.base.String() + path }

// do sends one request with a JSON body (nil for none) and decodes a JSON answer into out (nil to
// ignore it).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL(path), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return transportError(ctx, err)
	}
	if err := statusError(resp.StatusCode, data); err != nil {
		return err
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("netctl client: %s %s: bad answer: %v", method, path, err)
	}
	return nil
}

// transportError marks an error as unreachable, unless the caller's own context ended it.
func transportError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.DeadlineExceeded) {
		return err // cancelled by the caller: not the controller's fault
	}
	return &unreachable{err}
}

// statusError turns an error answer into an error.
func statusError(status int, body []byte) error {
	switch {
	case status < 300:
		return nil
	case status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return &unreachable{fmt.Errorf("HTTP %d", status)}
	}
	var e api.Error
	if json.Unmarshal(body, &e) != nil || e.Error.Code == "" {
		return &APIError{Status: status, Code: "http_error", Message: strings.TrimSpace(string(body))}
	}
	return &APIError{Status: status, Code: e.Error.Code, Message: e.Error.Message}
}

func esc(id string) string { return url.PathEscape(id) }

// Health checks that the controller answers.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var h api.Health
	err := c.do(ctx, http.MethodGet, api.Prefix+"/health", nil, &h)
	return h, err
}

// PutStream registers a stream, or replaces its source and layers.
func (c *Client) PutStream(ctx context.Context, s api.Stream) error {
	return c.do(ctx, http.MethodPut, api.Prefix+"/streams/"+esc(s.ID), s, nil)
}

// SetLayers replaces a stream's layers (their measured rates).
func (c *Client) SetLayers(ctx context.Context, stream string, layers []api.Layer) error {
	return c.do(ctx, http.MethodPut, api.Prefix+"/streams/"+esc(stream)+"/layers", api.LayersUpdate{Layers: layers}, nil)
}

// DeleteStream removes a stream and its subscriptions.
func (c *Client) DeleteStream(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, api.Prefix+"/streams/"+esc(id), nil, nil)
}

// PutSubscription registers a subscription and returns the decision for it, taken at once.
func (c *Client) PutSubscription(ctx context.Context, s api.Subscription) (api.SubscriptionResult, error) {
	var out api.SubscriptionResult
	err := c.do(ctx, http.MethodPut, api.Prefix+"/subscriptions/"+esc(s.ID), s, &out)
	return out, err
}

// DeleteSubscription removes a subscription.
func (c *Client) DeleteSubscription(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, api.Prefix+"/subscriptions/"+esc(id), nil, nil)
}

// Decisions returns every current decision.
func (c *Client) Decisions(ctx context.Context) (api.Decisions, error) {
	var out api.Decisions
	err := c.do(ctx, http.MethodGet, api.Prefix+"/decisions", nil, &out)
	return out, err
}

// Topology returns the controller's topology.
func (c *Client) Topology(ctx context.Context) (api.Topology, error) {
	var out api.Topology
	err := c.do(ctx, http.MethodGet, api.Prefix+"/topology", nil, &out)
	return out, err
}

// Links returns every link's live state.
func (c *Client) Links(ctx context.Context) ([]api.LinkState, error) {
	var out []api.LinkState
	err := c.do(ctx, http.MethodGet, api.Prefix+"/links", nil, &out)
	return out, err
}

// SetLinkCapacity overrides a link's capacity.
func (c *Client) SetLinkCapacity(ctx context.Context, link string, capacity cc.Bitrate) (api.LinkState, error) {
	v := int64(capacity)
	var out api.LinkState
	err := c.do(ctx, http.MethodPut, api.Prefix+"/links/"+esc(link), api.LinkUpdate{CapacityBps: &v}, &out)
	return out, err
}

// ResetLinkCapacity restores a link's capacity from the topology.
func (c *Client) ResetLinkCapacity(ctx context.Context, link string) (api.LinkState, error) {
	var out api.LinkState
	err := c.do(ctx, http.MethodPut, api.Prefix+"/links/"+esc(link), api.LinkUpdate{Reset: true}, &out)
	return out, err
}

// SetLinkLoad reports a link's measured total load.
func (c *Client) SetLinkLoad(ctx context.Context, link string, load cc.Bitrate) (api.LinkState, error) {
	v := int64(load)
	var out api.LinkState
	err := c.do(ctx, http.MethodPut, api.Prefix+"/links/"+esc(link), api.LinkUpdate{LoadBps: &v}, &out)
	return out, err
}

// Report posts an agent's interface rates.
func (c *Client) Report(ctx context.Context, r api.Report) (api.ReportResult, error) {
	var out api.ReportResult
	err := c.do(ctx, http.MethodPost, api.Prefix+"/reports", r, &out)
	return out, err
}

// Rules returns the drop rules of an enforcement node.
func (c *Client) Rules(ctx context.Context, node string) (api.Rules, error) {
	var out api.Rules
	err := c.do(ctx, http.MethodGet, api.Prefix+"/rules?node="+url.QueryEscape(node), nil, &out)
	return out, err
}
