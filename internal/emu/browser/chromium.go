package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"

	launch "github.com/strata-rtc/strata/internal/chromium"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

//go:embed flow.html
var flowPage []byte

// chromium is one headless Chromium started inside a host's namespace, with its page served
// from that namespace's loopback (http://127.0.0.1 is a secure context, which getUserMedia needs).
type chromium struct {
	who        string // names the browser in errors and the log
	ctx        context.Context
	cancelTab  context.CancelFunc
	cancelExec context.CancelFunc
	pid        int
	profile    string
	pages      *http.Server
	pageURL    string
	closeOnce  sync.Once
	closeErr   error
}

// chromiumConfig is how one browser is launched.
type chromiumConfig struct {
	who      string
	path     string // the Chromium binary
	host     endpoint.Host
	workDir  string // parent of the fresh profile directory
	videoFPS float64
	y4m      string // a y4m file as the camera, or ""
	log      io.Writer
	// pages, when set, is served instead of flow.html (its "/" is loaded), and ready is true in
	// the page once it can be driven (default: the flow page's).
	pages http.Handler
	ready string
}

// startChromium launches Chromium in cfg.host's namespace and loads the flow page. Chromium is
// the leader of its own process group, so close can kill it and every child it forked by its id.
func startChromium(ctx context.Context, cfg chromiumConfig) (_ *chromium, err error) {
	c := &chromium{who: cfg.who}
	if c.profile, err = os.MkdirTemp(cfg.workDir, "strata-emu-chromium-"); err != nil {
		return nil, fmt.Errorf("%s: profile directory: %w", cfg.who, err)
	}
	defer func() {
		if err != nil {
			_ = c.close()
		}
	}()
	if err := c.servePage(cfg.host, cfg.pages); err != nil {
		return nil, err
	}
	execCtx, cancelExec := chromedp.NewExecAllocator(context.Background(), execOptions(cfg, c.profile)...)
	c.ctx, c.cancelTab = chromedp.NewContext(execCtx)
	c.cancelExec = cancelExec
	messages := chromedp.Console(c.ctx) // starts the browser
	logw := logOrDiscard(cfg.log)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			fmt.Fprintf(logw, "%s %s %s\n", cfg.who, m.Type, m.Text)
		}
	}()
	// As soon as it runs, so that close can end its process group even if it never loads.
	c.notePID()
	// Actions need the tab's context; the caller's ends them too.
	start, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	if err := chromedp.Do(start, chromedp.Navigate(c.pageURL)); err != nil {
		return nil, fmt.Errorf("%s: starting Chromium: %w", cfg.who, err)
	}
	c.notePID()
	ready := cfg.ready
	if ready == "" {
		ready = `typeof window.flow === 'object'`
	}
	ok, err := evalJS[bool](ctx, c, ready)
	if err != nil {
		return nil, fmt.Errorf("%s: loading the page: %w", cfg.who, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: the page loaded but is not ready (%s)", cfg.who, ready)
	}
	return c, nil
}

// execOptions is how chromedp launches the browser: headless, fake devices at the flow's frame
// rate, the camera's file, a fresh profile, and `ip netns exec` into the host's namespace.
func execOptions(cfg chromiumConfig, profile string) []chromedp.ExecAllocatorOption {
	opts := append(launch.Options(cfg.path, profile),
		// The receiver never asks for the camera.
		launch.HostCandidates,
		launch.FullRate,
		launch.InNamespace(cfg.host.Name(), cfg.path),
	)
	if cfg.videoFPS > 0 {
		opts = append(opts, launch.FakeCameraFPS(cfg.videoFPS))
	}
	if cfg.y4m != "" {
		opts = append(opts, chromedp.Flag("use-file-for-fake-video-capture", cfg.y4m))
	}
	return opts
}

// notePID keeps the browser's PID once chromedp has started it.
func (c *chromium) notePID() {
	if c.pid > 0 {
		return
	}
	if b := chromedp.FromContext(c.ctx).Browser; b != nil && b.Process() != nil {
		c.pid = b.Process().Pid
	}
}

func logOrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// servePage serves pages (nil: flow.html) on 127.0.0.1 inside the host's namespace (loopback
// brought up).
func (c *chromium) servePage(host endpoint.Host, pages http.Handler) error {
	if out, err := host.Command(context.Background(), "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("%s: loopback up in %s: %v: %s", c.who, host.Name(), err, out)
	}
	var l net.Listener
	if err := host.Do(func() (err error) {
		l, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		return fmt.Errorf("%s: page server in %s: %w", c.who, host.Name(), err)
	}
	if pages == nil {
		mux := http.NewServeMux()
		mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(flowPage)
		})
		pages = mux
	}
	c.pages = &http.Server{Handler: pages, ReadHeaderTimeout: 10 * time.Second}
	c.pageURL = "http://" + l.Addr().String() + "/"
	go func() { _ = c.pages.Serve(l) }()
	return nil
}

// close ends the browser (its DevTools connection, then its whole process group by id), stops
// the page server and removes the profile. It is idempotent.
func (c *chromium) close() error {
	c.closeOnce.Do(func() {
		var errs []error
		if c.cancelTab != nil {
			c.cancelTab()
			c.cancelExec() // kills Chromium and waits for it
		}
		if c.pid > 0 {
			// Renderers and utility processes that outlived the browser share its group.
			if err := syscall.Kill(-c.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("%s: killing process group %d: %w", c.who, c.pid, err))
			}
		}
		if c.pages != nil {
			_ = c.pages.Close()
		}
		if c.profile != "" {
			if err := removeAllRetry(c.profile); err != nil {
				errs = append(errs, fmt.Errorf("%s: removing its profile: %w", c.who, err))
			}
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// removeAllRetry removes dir, retrying while processes that were just killed still write to it.
func removeAllRetry(dir string) error {
	var err error
	for i := 0; i < 20; i++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// evalJS evaluates js in c's page, awaiting a promise, and decodes the result. The call needs
// the tab's context; it also ends when ctx does, and after 20 s.
func evalJS[T any](ctx context.Context, c *chromium, js string) (T, error) {
	tab, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return chromedp.Run(tab, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// jsValue is v as a JavaScript literal.
func jsValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
