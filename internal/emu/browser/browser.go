// Package browser runs the lab's `browser` flows in emulation: headless Chromium in the flow's
// source host sends its fake camera (or a y4m file) to a receiving Chromium in the destination
// host, or to `strata serve`'s echotest there, with libwebrtc's own congestion control (send-side
// GCC). Every interval the flow reads getStats and records the sender's estimate
// (availableOutgoingBitrate of the selected candidate pair) as the target, the pair's
// currentRoundTripTime as the RTT, and the receiver's new payload bytes (inbound-rtp
// bytesReceived less its retransmitted and FEC bytes) as goodput.
package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	launch "github.com/strata-rtc/strata/internal/chromium"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/videogen"
)

// DefaultChromium is Debian's Chromium, as the e2e tests and benchmarks use it.
const DefaultChromium = launch.Path

// Options are what the engine knows and a scenario does not.
type Options struct {
	// Chromium is the browser binary; empty: DefaultChromium.
	Chromium string
	// Strata is the strata binary, needed for `receiver: echotest`.
	Strata string
	// Interval is how often getStats is read; 0: 100 ms.
	Interval time.Duration
	// WorkDir holds the browsers' profiles and strata's configuration while the flow runs; empty:
	// the system's temporary directory. Everything the flow puts there is removed by Stop.
	WorkDir string
}

// flow is one browser flow: a sending Chromium and its receiver.
type flow struct {
	env  endpoint.Env
	opts Options

	sender, receiver *chromium
	echo             *echotest
	y4m              string // the camera's file: the scenario's, or generated
	videoDir         string // where generated video lives while the flow runs

	sampler      *sampler
	stopSampling context.CancelFunc
	sampling     sync.WaitGroup
	stopOnce     sync.Once
	stopErr      error
}

// New checks the flow and the options; Start launches the browsers.
func New(env endpoint.Env, opts Options) (endpoint.Flow, error) {
	if env.Spec.Kind != scenario.KindBrowser {
		return nil, fmt.Errorf("browser: flow %s is a %s flow", env.Spec.Name, env.Spec.Kind)
	}
	if env.Src == nil || env.Dst == nil || env.Rec == nil {
		return nil, fmt.Errorf("browser: flow %s needs both hosts and a recorder", env.Spec.Name)
	}
	if opts.Chromium == "" {
		opts.Chromium = DefaultChromium
	}
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	if _, err := os.Stat(opts.Chromium); err != nil {
		return nil, fmt.Errorf("browser: flow %s needs headless Chromium at %s (apt-get install -y chromium): %w",
			env.Spec.Name, opts.Chromium, err)
	}
	if f := env.Spec.Video.File; f != "" {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("browser: flow %s: video file: %w", env.Spec.Name, err)
		}
	}
	switch env.Spec.Receiver {
	case scenario.ReceiverBrowser, "":
	case scenario.ReceiverEchotest:
		if opts.Strata == "" {
			return nil, fmt.Errorf("browser: flow %s has receiver: echotest but no strata binary was given", env.Spec.Name)
		}
		if _, err := os.Stat(opts.Strata); err != nil {
			return nil, fmt.Errorf("browser: flow %s: strata binary: %w", env.Spec.Name, err)
		}
	default:
		return nil, fmt.Errorf("browser: flow %s: unknown receiver %q", env.Spec.Name, env.Spec.Receiver)
	}
	if env.Log == nil {
		env.Log = io.Discard
	}
	env.Spec.Video = withDefaults(env.Spec.Video)
	return &flow{env: env, opts: opts}, nil
}

// withDefaults fills what a flow built in code rather than parsed from a file left out.
func withDefaults(v scenario.BrowserVideo) scenario.BrowserVideo {
	def := scenario.DefaultBrowserVideo()
	if v.Width <= 0 || v.Height <= 0 {
		v.Width, v.Height = def.Width, def.Height
	}
	if v.FPS <= 0 {
		v.FPS = def.FPS
	}
	if v.Content == "" {
		v.Content = def.Content
	}
	return v
}

func (f *flow) chromiumConfig(who string, host endpoint.Host) chromiumConfig {
	return chromiumConfig{who: f.env.Spec.Name + "/" + who, path: f.opts.Chromium, host: host,
		workDir: f.opts.WorkDir, videoFPS: f.env.Spec.Video.FPS, y4m: f.y4m, log: f.env.Log}
}

// prepareVideo picks the camera's content: the scenario's file, generated video (a 2 s loop at
// the scenario's size and rate), or Chromium's own fake camera.
func (f *flow) prepareVideo() error {
	v := f.env.Spec.Video
	switch {
	case v.File != "":
		f.y4m = v.File
	case v.Content == scenario.ContentNoise:
		dir, err := os.MkdirTemp(f.opts.WorkDir, "strata-emu-video-")
		if err != nil {
			return err
		}
		f.videoDir = dir
		f.y4m = filepath.Join(dir, "noise.y4m")
		if err := writeNoiseY4M(f.y4m, v.Width, v.Height, v.FPS, videogen.NoiseLoop, f.env.Seed); err != nil {
			return fmt.Errorf("generating the video: %w", err)
		}
	}
	return nil
}

// Start launches the sender (and the receiving Chromium or strata), connects them and returns
// once the receiver has media; on error everything started is released.
func (f *flow) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("browser flow %s: %w", f.env.Spec.Name, err), f.release())
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := f.prepareVideo(); err != nil {
		return err
	}
	if err := f.launch(ctx); err != nil {
		return err
	}
	if err := f.connect(ctx); err != nil {
		return err
	}
	s := &sampler{rec: f.env.Rec, log: f.env.Log, who: f.env.Spec.Name, sender: f.sender, receiver: f.receiver, echo: f.echo}
	if err := s.waitMedia(ctx); err != nil {
		return err
	}
	f.sampler = s
	sampleCtx, stop := context.WithCancel(context.Background())
	f.stopSampling = stop
	f.sampling.Add(1)
	go func() {
		defer f.sampling.Done()
		s.run(sampleCtx, f.opts.Interval)
	}()
	return nil
}

// launch starts both ends side by side: Chromium takes about half a second to start.
func (f *flow) launch(ctx context.Context) error {
	launched := make(chan error, 1)
	go func() {
		var err error
		if f.env.Spec.Receiver == scenario.ReceiverEchotest {
			f.echo, err = startEchotest(ctx, f.env.Dst, f.opts, f.env.Log)
		} else {
			f.receiver, err = startChromium(ctx, f.chromiumConfig("receiver", f.env.Dst))
		}
		launched <- err
	}()
	var err error
	f.sender, err = startChromium(ctx, f.chromiumConfig("sender", f.env.Src))
	return errors.Join(err, <-launched)
}

// connect carries the sender's offer to the receiver and its answer back (every candidate is in
// them: no trickle).
func (f *flow) connect(ctx context.Context) error {
	v := f.env.Spec.Video
	offer, err := evalJS[string](ctx, f.sender, fmt.Sprintf(`flow.offer(%s)`, jsValue(map[string]any{
		"width": v.Width, "height": v.Height, "fps": v.FPS, "maxRate": v.MaxRate})))
	if err != nil {
		return fmt.Errorf("sender's offer: %w", err)
	}
	var answer string
	if f.echo != nil {
		answer, err = f.echo.call(ctx, offer)
	} else {
		answer, err = evalJS[string](ctx, f.receiver, `flow.answer(`+jsValue(offer)+`)`)
	}
	if err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	if _, err := evalJS[bool](ctx, f.sender, `flow.accept(`+jsValue(answer)+`)`); err != nil {
		return fmt.Errorf("sender accepting the answer: %w", err)
	}
	return nil
}

// Stop ends sampling and releases the browsers, strata, their pages and profiles.
func (f *flow) Stop() error {
	f.stopOnce.Do(func() { f.stopErr = f.release() })
	return f.stopErr
}

func (f *flow) release() error {
	if f.stopSampling != nil {
		f.stopSampling()
		f.sampling.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		fmt.Fprintln(f.env.Log, f.sampler.summary(ctx))
		cancel()
	}
	var errs []error
	for _, c := range []*chromium{f.sender, f.receiver} {
		if c != nil {
			errs = append(errs, c.close())
		}
	}
	if f.echo != nil {
		errs = append(errs, f.echo.close())
	}
	if f.videoDir != "" {
		errs = append(errs, removeAllRetry(f.videoDir))
	}
	return errors.Join(errs...)
}
