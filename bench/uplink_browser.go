package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	launch "github.com/strata-rtc/strata/internal/chromium"
	"github.com/strata-rtc/strata/internal/netns"
)

const (
	chromiumPath = launch.Path
	// janusJSPath is where Debian's libjs-janus-gateway installs janus.js.
	janusJSPath = "/usr/share/javascript/janus-gateway/janus.js"
)

var (
	//go:embed uplink.html
	uplinkPage []byte
	//go:embed uplink_peer.html
	peerPage []byte
	//go:embed uplink_stats.js
	statsJS []byte
)

// uplinkSample is one getStats() sample of the page (bench/uplink.html): cumulative counters of
// the video and audio outbound-rtp, the video remote-inbound-rtp and the selected candidate pair.
type uplinkSample struct {
	T        float64            `json:"t"` // ms, the page's performance.now()
	VBytes   float64            `json:"vBytes"`
	VHdr     float64            `json:"vHdr"`
	VRtx     float64            `json:"vRtx"`
	VPkts    float64            `json:"vPkts"`
	VRtxPkts float64            `json:"vRtxPkts"`
	NACK     float64            `json:"nack"`
	PLI      float64            `json:"pli"`
	Target   float64            `json:"target"`
	QL       string             `json:"ql"`
	QLD      map[string]float64 `json:"qld"`
	FPS      float64            `json:"fps"`
	W        float64            `json:"w"`
	H        float64            `json:"h"`
	ABytes   float64            `json:"aBytes"`
	AHdr     float64            `json:"aHdr"`
	RRtt     float64            `json:"rRtt"`
	RRttN    float64            `json:"rRttN"`
	RRttSum  float64            `json:"rRttSum"`
	RLost    float64            `json:"rLost"`
	RFrac    float64            `json:"rFrac"`
	PRtt     float64            `json:"pRtt"`
	PRttN    float64            `json:"pRttN"`
	PRttSum  float64            `json:"pRttSum"`
	Avail    float64            `json:"avail"`
	PBytes   float64            `json:"pBytes"`
}

// pageState is what the benchmark reads of window.uplink at the end of a call.
type pageState struct {
	State   string         `json:"state"`
	Error   string         `json:"error"`
	UpAt    float64        `json:"upAt"`
	Samples []uplinkSample `json:"samples"`
	Events  []string       `json:"events"`
	// UpWall is when the benchmark saw the PeerConnection up (within 200 ms of upAt).
	UpWall time.Time `json:"up_wall"`
}

// pageServer serves bench/uplink.html (at /), bench/uplink_peer.html (/peer.html), their
// statistics script and the installed janus.js, unmodified, on 127.0.0.1 inside a namespace: a
// secure context (getUserMedia needs one) that no other process on the machine can reach or
// collide with.
type pageServer struct {
	l   net.Listener
	srv *http.Server
}

func servePages(ns string) (*pageServer, error) {
	l, err := listenInNetns(ns, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/janus.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, janusJSPath) })
	static := func(path, contentType string, body []byte) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(body)
		})
	}
	static("/{$}", "text/html; charset=utf-8", uplinkPage)
	static("/peer.html", "text/html; charset=utf-8", peerPage)
	static("/stats.js", "text/javascript; charset=utf-8", statsJS)
	p := &pageServer{l: l, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

func (p *pageServer) url(api string, echo bool) string {
	u := "http://" + p.l.Addr().String() + "/?server=" + url.QueryEscape(api)
	if !echo {
		u += "&echo=0"
	}
	return u
}

func (p *pageServer) peerURL(role string) string {
	return "http://" + p.l.Addr().String() + "/peer.html?role=" + role
}

func (p *pageServer) close() { _ = p.srv.Close() }

// listenInNetns opens a listening socket inside the named network namespace (a socket belongs to
// the namespace it was created in).
func listenInNetns(ns, network, addr string) (net.Listener, error) {
	var l net.Listener
	err := netns.Do(ns, func() (err error) {
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// chromium is one headless Chromium we started inside the browser's namespace, by PID.
type chromium struct {
	ctx     context.Context
	cancel  func()
	console io.WriteCloser
}

// startChromium launches Chromium in namespace ns with fake 720p30 capture and a fresh profile.
// Its console goes to consolePath; with vmodule set, its own logging (--enable-logging=stderr
// --vmodule=...) goes to logPath. extra adds options.
func startChromium(ns, profileDir, consolePath, logPath, vmodule string, extra ...chromedp.ExecAllocatorOption) (*chromium, error) {
	console, err := os.Create(consolePath)
	if err != nil {
		return nil, err
	}
	c := &chromium{console: console}
	opts := append(launch.Options(chromiumPath, profileDir),
		// The fake camera: 30 fps (its default is 20), so the encoder can fill every cap.
		launch.FakeCameraFPS(30),
		launch.Autoplay,
		launch.FullRate,
		launch.InNamespace(ns, chromiumPath),
	)
	opts = append(opts, extra...)
	if vmodule != "" {
		logf, err := os.Create(logPath)
		if err != nil {
			console.Close()
			return nil, err
		}
		opts = append(opts, chromedp.Flag("enable-logging", "stderr"), chromedp.Flag("vmodule", vmodule),
			chromedp.CombinedOutput(logf))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	c.ctx = ctx
	c.cancel = func() {
		cancelTab()
		cancelAlloc() // waits for the browser process to exit
		console.Close()
	}
	messages := chromedp.Console(ctx) // starts the browser
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			fmt.Fprintf(console, "%s %-9s %s\n", m.Time.Format("15:04:05.000"), m.Type, m.Text)
		}
	}()
	start, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(start, chromedp.Navigate("about:blank")); err != nil {
		c.cancel()
		return nil, fmt.Errorf("starting Chromium: %w", err)
	}
	return c, nil
}

func (c *chromium) close() { c.cancel() }

func evalJS[T any](ctx context.Context, timeout time.Duration, js string) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// waitJS polls a JavaScript condition until it holds or the timeout passes.
func waitJS(ctx context.Context, what, cond string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := evalJS[bool](ctx, 10*time.Second, "Boolean("+cond+")")
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s (last error: %v)", timeout, what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// call runs one echotest call from the page: start, wait for the PeerConnection, hold it for
// hold, then read the page's samples and destroy the Janus session (so the server ends the call
// the way janus.js ends it).
func (c *chromium) call(ctx context.Context, pageURL string, hold time.Duration) (*pageState, error) {
	if err := chromedp.Do(c.ctx, chromedp.Navigate(pageURL)); err != nil {
		return nil, err
	}
	// Clicking before Janus.init has called back does nothing.
	if err := waitJS(c.ctx, "Janus.init", `window.uplink && window.uplink.state === 'ready' && Janus.initDone`, 15*time.Second); err != nil {
		return nil, err
	}
	if err := chromedp.Do(c.ctx, chromedp.Click(chromedp.ID("start"))); err != nil {
		return nil, err
	}
	st, err := c.holdCall(ctx, hold, "janus.js")
	_, _ = evalJS[chromedp.Void](c.ctx, 10*time.Second, `new Promise((resolve) =>
		window.uplink.janus.destroy({ success: resolve, error: resolve }))`)
	return st, err
}

// holdCall waits for the page's PeerConnection to come up, holds the call for hold and returns
// the page's samples; who names the page in errors.
func (c *chromium) holdCall(ctx context.Context, hold time.Duration, who string) (*pageState, error) {
	if err := waitJS(c.ctx, "the PeerConnection", `window.uplink.upAt !== null || window.uplink.state === 'error'`, 30*time.Second); err != nil {
		return nil, err
	}
	upWall := time.Now()
	if msg, _ := evalJS[string](c.ctx, 5*time.Second, `window.uplink.error || ''`); msg != "" {
		return nil, errors.New(who + ": " + msg)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(hold):
	}
	st, err := evalJS[pageState](c.ctx, 20*time.Second, `({state: window.uplink.state, error: window.uplink.error || '',
		upAt: window.uplink.upAt, samples: window.uplink.samples, events: window.uplink.events})`)
	if err != nil {
		return nil, fmt.Errorf("reading the samples: %w", err)
	}
	st.UpWall = upWall
	if st.Error != "" {
		return &st, errors.New(who + ": " + st.Error)
	}
	return &st, nil
}

// callPeer runs the reference call: c sends to recv (another Chromium, whose libwebrtc gives the
// feedback), the benchmark carrying the offer and the answer; it holds the call for hold and
// returns the sender's samples.
func (c *chromium) callPeer(ctx context.Context, recv *chromium, sendURL, recvURL string, hold time.Duration) (*pageState, error) {
	for _, b := range []struct {
		br  *chromium
		url string
	}{{c, sendURL}, {recv, recvURL}} {
		if err := chromedp.Do(b.br.ctx, chromedp.Navigate(b.url)); err != nil {
			return nil, err
		}
		if err := waitJS(b.br.ctx, "the page", `window.peer && window.uplink.state === 'ready'`, 15*time.Second); err != nil {
			return nil, err
		}
	}
	offer, err := evalJS[string](c.ctx, 20*time.Second, `peer.offer()`)
	if err != nil {
		return nil, fmt.Errorf("offer: %w", err)
	}
	answer, err := evalJS[string](recv.ctx, 20*time.Second, fmt.Sprintf(`peer.answer(%s)`, jsString(offer)))
	if err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	if _, err := evalJS[bool](c.ctx, 20*time.Second, fmt.Sprintf(`peer.accept(%s)`, jsString(answer))); err != nil {
		return nil, fmt.Errorf("accepting the answer: %w", err)
	}
	return c.holdCall(ctx, hold, "page")
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// chromiumVersion is what `chromium --version` says, for the results.
func chromiumVersion() string {
	out, err := exec.Command(chromiumPath, "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
