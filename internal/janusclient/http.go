package janusclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxReply bounds what the client reads from one HTTP response.
const maxReply = 16 << 20

// httpTransport is Janus's REST API: POST base, base/<session> and base/<session>/<handle> for
// requests (the synchronous reply is the response body), and one long-poll GET base/<session> loop
// per session for events.
type httpTransport struct {
	base     string
	client   *http.Client
	maxev    int
	dispatch func(*Event)

	mu     sync.Mutex
	polls  map[uint64]context.CancelFunc
	closed bool
}

func newHTTPTransport(base string, o options, dispatch func(*Event)) *httpTransport {
	return &httpTransport{
		base: strings.TrimRight(base, "/"), client: o.httpClient, maxev: max(o.maxEvents, 1),
		dispatch: dispatch, polls: map[uint64]context.CancelFunc{},
	}
}

func (t *httpTransport) path(sessionID, handleID uint64) string {
	switch {
	case handleID != 0:
		return fmt.Sprintf("%s/%d/%d", t.base, sessionID, handleID)
	case sessionID != 0:
		return fmt.Sprintf("%s/%d", t.base, sessionID)
	default:
		return t.base
	}
}

func (t *httpTransport) send(ctx context.Context, sessionID, handleID uint64, msg map[string]any) (*Event, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.path(sessionID, handleID), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return nil, err
	}
	// Errors come with 4xx/5xx statuses but still as a Janus envelope.
	evs, err := decodeEvents(raw)
	if err != nil || len(evs) != 1 {
		return nil, fmt.Errorf("janusclient: HTTP %d with an unexpected body: %.200s", resp.StatusCode, raw)
	}
	return evs[0], nil
}

func (t *httpTransport) startSession(id uint64) {
	ctx, cancel := context.WithCancel(context.Background())
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		cancel()
		return
	}
	t.polls[id] = cancel
	t.mu.Unlock()
	go t.poll(ctx, id)
}

func (t *httpTransport) stopSession(id uint64) {
	t.mu.Lock()
	cancel := t.polls[id]
	delete(t.polls, id)
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// poll long-polls a session until it is stopped or the server says it is gone.
func (t *httpTransport) poll(ctx context.Context, id uint64) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		evs, gone, err := t.pollOnce(ctx, id)
		for _, ev := range evs {
			t.dispatch(ev)
		}
		if gone {
			return
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
	}
}

func (t *httpTransport) pollOnce(ctx context.Context, id uint64) (evs []*Event, gone bool, err error) {
	url := t.path(id, 0) + "?maxev=" + strconv.Itoa(t.maxev) + "&rid=" + strconv.FormatInt(time.Now().UnixNano(), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, true, err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return nil, false, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, true, nil // the session no longer exists
	}
	evs, err = decodeEvents(raw)
	return evs, false, err
}

func (t *httpTransport) close() error {
	t.mu.Lock()
	t.closed = true
	polls := t.polls
	t.polls = map[uint64]context.CancelFunc{}
	t.mu.Unlock()
	for _, cancel := range polls {
		cancel()
	}
	return nil
}
