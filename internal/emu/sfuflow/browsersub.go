package sfuflow

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/emu/browser"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

//go:embed subscriber.html
var subscriberPage []byte

// janusJS is where Debian's libjs-janus-gateway installs janus.js, which the page uses unmodified.
const janusJS = "/usr/share/javascript/janus-gateway/janus.js"

// browserJoinTimeout bounds a browser subscriber's start: Chromium, its page, the join, ICE and
// DTLS, and the first media.
const browserJoinTimeout = 45 * time.Second

// checkBrowser says what a browser subscriber would miss on this machine.
func checkBrowser(chromium string) error {
	if _, err := os.Stat(chromium); err != nil {
		return fmt.Errorf("a browser subscriber needs headless Chromium at %s (apt-get install -y chromium): %w", chromium, err)
	}
	if _, err := os.Stat(janusJS); err != nil {
		return fmt.Errorf("a browser subscriber needs janus.js (apt-get install -y libjs-janus-gateway): %w", err)
	}
	return nil
}

// browserSubscriber is a session's subscriber in headless Chromium in the subscriber's host:
// janus.js joins the videoroom over the Janus HTTP API, libwebrtc receives the video and sends
// its own feedback, and every interval the page's getStats is read into count and the recorder.
type browserSubscriber struct {
	b     *browser.Chromium
	count *sampleCounter
	rec   endpoint.Recorder
	now   func() time.Duration
	log   io.Writer
	who   string

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	once      sync.Once
	delivered float64 // payload bytes at the last sample
	last      pageStats
}

// joinSpec is what the page's sub.start takes.
type joinSpec struct {
	Server string `json:"server"`
	Room   uint64 `json:"room"`
	Feed   uint64 `json:"feed"`
	Mid    string `json:"mid"`
	Opaque string `json:"opaque"`
}

func subscriberPages() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/janus.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, janusJS) })
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(subscriberPage)
	})
	return mux
}

// start launches Chromium in host, joins as j says and returns once video payload has arrived;
// it then samples every interval until close.
func (sub *browserSubscriber) start(ctx context.Context, cfg browser.LaunchConfig, j joinSpec, interval time.Duration) (err error) {
	ctx, cancel := context.WithTimeout(ctx, browserJoinTimeout)
	defer cancel()
	cfg.Pages, cfg.Ready = subscriberPages(), `typeof window.sub === 'object'`
	if sub.b, err = browser.Launch(ctx, cfg); err != nil {
		return err
	}
	if _, err := browser.Eval[bool](ctx, sub.b, `sub.start(`+browser.JSValue(j)+`)`); err != nil {
		return fmt.Errorf("joining through janus.js: %w", err)
	}
	if err := sub.waitMedia(ctx); err != nil {
		return err
	}
	sctx, stop := context.WithCancel(context.Background())
	sub.cancel = stop
	sub.wg.Add(1)
	go sub.run(sctx, interval)
	return nil
}

// waitMedia returns once the page has video payload, or fails when ctx ends.
func (sub *browserSubscriber) waitMedia(ctx context.Context) error {
	for {
		s, err := browser.Eval[pageStats](ctx, sub.b, `sub.stats()`)
		if err == nil && s.Recv > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no video at the browser subscriber (stats %+v, last error %v): %w", s, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// run samples every interval until ctx ends; the first sample counts from zero, so what arrived
// before start returned is counted too.
func (sub *browserSubscriber) run(ctx context.Context, interval time.Duration) {
	defer sub.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	failed := false
	for {
		s, err := browser.Eval[pageStats](ctx, sub.b, `sub.stats()`)
		switch {
		case err == nil:
			sub.observe(s)
		case ctx.Err() == nil && !failed:
			failed = true // once: a browser that died keeps failing
			fmt.Fprintf(sub.log, "sfuflow: %s: getStats: %v\n", sub.who, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (sub *browserSubscriber) observe(s pageStats) {
	sub.count.observe(sub.now(), s)
	if d := s.Recv - sub.delivered; d > 0 {
		if sub.rec != nil {
			sub.rec.Goodput(int(d))
		}
		sub.delivered = s.Recv
	}
	sub.last = s
}

// close stops sampling, leaves the room (as a user closing the page would) and ends Chromium.
func (sub *browserSubscriber) close() error {
	var err error
	sub.once.Do(func() {
		if sub.cancel != nil {
			sub.cancel()
			sub.wg.Wait()
			l := sub.last
			fmt.Fprintf(sub.log, "sfuflow: %s: %.0f payload bytes in %.0f packets (%d of them probes), %.0f lost, %.0f frames decoded, last %dx%d, %.0f NACKs, %.0f PLIs\n",
				sub.who, l.Recv, l.Pkts, sub.count.probes(), l.Lost, l.Frames, l.W, l.H, l.NACKs, l.PLIs)
		}
		if sub.b == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, _ = browser.Eval[bool](ctx, sub.b, `sub.leave()`) // the server may be gone already
		err = sub.b.Close()
	})
	return err
}
