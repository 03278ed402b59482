package flows

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/emu/browser"
	"github.com/strata-rtc/strata/web"
)

// lowprioPage is the sending page of a browser-endpoint transfer.
//
//go:embed lowprio.html
var lowprioPage []byte

// browserLowPrio is a ledbat flow whose sender is headless Chromium in Src (strata's
// web/lib/lowprio.js for ledbat and ledbat++, Chromium's own SCTP for sctp) and whose receiver
// is the Pion PeerConnection of a LowPrio in Dst. The lab carries offer and answer.
type browserLowPrio struct {
	*LowPrio
	chrome *browser.Chromium
}

// pages serves the sending page at "/" and strata's client files (lib/, wasm/) beside it.
func pages() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", web.Handler())
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(lowprioPage)
	})
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return mux
}

// Start launches Chromium, connects it to the Pion receiver and starts receiving and sampling.
func (f *browserLowPrio) Start(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("flow %s: %w", f.env.Spec.Name, err), f.release())
		}
	}()
	if f.rcv, err = f.newPeer(f.env.Dst); err != nil {
		return fmt.Errorf("receiver's PeerConnection in %s: %w", f.env.Dst.Name(), err)
	}
	remote := make(chan *webrtc.DataChannel, 1)
	f.rcv.OnDataChannel(func(ch *webrtc.DataChannel) {
		select {
		case remote <- ch:
		default:
		}
	})
	f.chrome, err = browser.Launch(ctx, browser.LaunchConfig{Who: f.env.Spec.Name + "/sender", Host: f.env.Src,
		Pages: pages(), Ready: `window.lpReady === true`, Log: f.env.Log})
	if err != nil {
		return err
	}
	if err := f.connect(ctx); err != nil {
		return err
	}
	rch, ok := recvFrom(ctx, remote)
	if !ok {
		return fmt.Errorf("the browser's data channel did not reach %v: %w", f.env.Dst.Addr(), ctx.Err())
	}
	run, stop := context.WithCancel(context.Background())
	f.cancel = stop
	if f.cc == ccSCTP {
		receiveBulk(rch, f.env.Rec)
	} else {
		f.goRun(func() error { return receiveLEDBAT(run, f.env, rch, f.ledbatOptions(false)) })
	}
	f.goRun(func() error { return f.sample(run) })
	return nil
}

// connect carries Chromium's offer (every candidate in it) to the receiver and the answer back.
func (f *browserLowPrio) connect(ctx context.Context) error {
	offer, err := browser.Eval[string](ctx, f.chrome, `lp.offer(`+browser.JSValue(map[string]any{
		"cc": f.cc, "targetMs": f.target.Milliseconds(), "stream": ledbatStream})+`)`)
	if err != nil {
		return fmt.Errorf("the browser's offer: %w", err)
	}
	if err := f.rcv.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	answer, err := f.rcv.CreateAnswer(nil)
	if err != nil {
		return err
	}
	if err := setLocal(ctx, f.rcv, answer); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	if _, err := browser.Eval[bool](ctx, f.chrome, `lp.accept(`+browser.JSValue(f.rcv.LocalDescription().SDP)+`)`); err != nil {
		return fmt.Errorf("the browser accepting the answer: %w", err)
	}
	return nil
}

// sample records the page's RTT and window every sampleEvery; an error the page met ends the flow.
func (f *browserLowPrio) sample(ctx context.Context) error {
	type sample struct {
		RTTMs float64 `json:"rttMs"`
		Cwnd  float64 `json:"cwnd"`
		Error string  `json:"error"`
	}
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		s, err := browser.Eval[sample](ctx, f.chrome, `lp.sample()`)
		if err != nil {
			return endErr("Chromium sender", ctx, err)
		}
		if s.Error != "" {
			return fmt.Errorf("the browser sender: %s", s.Error)
		}
		if s.RTTMs > 0 {
			f.env.Rec.RTT(time.Duration(s.RTTMs * float64(time.Millisecond)))
		}
		if s.Cwnd > 0 {
			f.env.Rec.Cwnd(s.Cwnd)
		}
	}
}

// Stop ends the transfer, Chromium and the receiver.
func (f *browserLowPrio) Stop() error { return f.stop(f.release) }

func (f *browserLowPrio) release() error {
	var errs []error
	if f.chrome != nil {
		errs = append(errs, f.chrome.Close())
	}
	return errors.Join(append(errs, f.closePeers())...)
}
