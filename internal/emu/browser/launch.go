package browser

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// LaunchConfig is how another of the engine's endpoints (the SFU's browser subscribers) launches
// a Chromium of its own, with its own page, the way this package launches a flow's browsers.
type LaunchConfig struct {
	// Who names the browser in errors and the log.
	Who string
	// Chromium is the browser binary; empty: DefaultChromium.
	Chromium string
	// Host is where the browser runs (its network namespace) and where Pages are served, on its
	// 127.0.0.1 (a secure context).
	Host endpoint.Host
	// WorkDir is the parent of the browser's fresh profile; empty: the system's temporary directory.
	WorkDir string
	// Pages is the page's server; its "/" is loaded.
	Pages http.Handler
	// Ready is a JavaScript expression that is true once the loaded page can be driven.
	Ready string
	Log   io.Writer
}

// Chromium is a headless Chromium that Launch started; Close ends it.
type Chromium struct{ c *chromium }

// Launch starts Chromium in cfg.Host's namespace, serves cfg.Pages there and loads its "/".
func Launch(ctx context.Context, cfg LaunchConfig) (*Chromium, error) {
	if cfg.Host == nil || cfg.Pages == nil || cfg.Ready == "" {
		return nil, errors.New("browser: Launch needs a host, pages and a readiness expression")
	}
	if cfg.Chromium == "" {
		cfg.Chromium = DefaultChromium
	}
	c, err := startChromium(ctx, chromiumConfig{who: cfg.Who, path: cfg.Chromium, host: cfg.Host,
		workDir: cfg.WorkDir, log: cfg.Log, pages: cfg.Pages, ready: cfg.Ready})
	if err != nil {
		return nil, err
	}
	return &Chromium{c: c}, nil
}

// Close ends the browser and every process it forked, stops its page server and removes its
// profile; it is idempotent.
func (b *Chromium) Close() error { return b.c.close() }

// Eval evaluates js in b's page, awaiting a promise, and decodes the result; it ends with ctx,
// and after 20 s.
func Eval[T any](ctx context.Context, b *Chromium, js string) (T, error) {
	return evalJS[T](ctx, b.c, js)
}

// JSValue is v as a JavaScript literal (JSON).
func JSValue(v any) string { return jsValue(v) }
