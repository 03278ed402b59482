package textroom

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/config"
)

// poster sends the rooms' public messages and announcements to their HTTP backends (a room's
// `post`), as Janus's textroom does with libcurl — but never on the request's path: Janus POSTs
// while holding the room, so one slow backend stalls the room's every message. Here a message is
// queued without waiting and a few workers POST it, each POST bounded by the timeout; when the
// queue is full the message is dropped for the backend (never for the participants) and counted.
type poster struct {
	client *http.Client
	jobs   chan postJob
	log    *slog.Logger

	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup

	sent, failed, dropped atomic.Uint64
}

type postJob struct {
	url  string
	body []byte
}

// PostStats counts the POSTs to the rooms' backends since start.
type PostStats struct {
	Sent    uint64 // answered with a 2xx status
	Failed  uint64 // no answer within the timeout, a transport error, or another status
	Dropped uint64 // not attempted: the queue was full
}

func newPoster(cfg config.TextRoomPost, log *slog.Logger) *poster {
	ps := &poster{
		client: &http.Client{Timeout: cfg.Timeout},
		jobs:   make(chan postJob, max(cfg.QueueSize, 1)),
		log:    log,
		stop:   make(chan struct{}),
	}
	for range max(cfg.Workers, 1) {
		ps.wg.Add(1)
		go ps.work()
	}
	return ps
}

// post queues body for url without waiting; it may be called under the plugin's mutex.
func (ps *poster) post(url string, body []byte) {
	select {
	case ps.jobs <- postJob{url, body}:
	default:
		// Logged at the first drop and then at every power of two, so a flood does not flood the log.
		if n := ps.dropped.Add(1); n&(n-1) == 0 {
			ps.log.Warn("textroom: backend queue full, message not posted", "url", url, "dropped", n)
		}
	}
}

func (ps *poster) work() {
	defer ps.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-ps.stop
		cancel() // shutdown ends a POST under way
	}()
	for {
		select {
		case <-ps.stop:
			return
		case j := <-ps.jobs:
			if err := ps.send(ctx, j); err != nil {
				n := ps.failed.Add(1)
				ps.log.Warn("textroom: couldn't post the message to the backend", "url", j.url, "err", err, "failed", n)
			} else {
				ps.sent.Add(1)
			}
		}
	}
}

// send is one POST, with the headers Janus sends.
func (ps *poster) send(ctx context.Context, j postJob) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.url, bytes.NewReader(j.body))
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := ps.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// close stops the workers; messages still queued are not posted.
func (ps *poster) close() {
	ps.once.Do(func() { close(ps.stop) })
	ps.wg.Wait()
}

func (ps *poster) stats() PostStats {
	return PostStats{Sent: ps.sent.Load(), Failed: ps.failed.Load(), Dropped: ps.dropped.Load()}
}

// postTo hands a public message or an announcement to the room's backend, if it has one.
func (p *Plugin) postTo(rm *room, msg []byte) {
	if rm.post != "" {
		p.posts.post(rm.post, msg)
	}
}
