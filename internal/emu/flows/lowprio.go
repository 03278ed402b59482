package flows

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/emu/browser"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// The controllers a ledbat flow runs in emulation.
const (
	ccLEDBAT   = "ledbat"
	ccLEDBATPP = "ledbat++"
	ccSCTP     = "sctp"
)

// LowPrio is a data-channel bulk transfer (flow kind ledbat) from Src to Dst between two Pion
// PeerConnections, one in each host, signalled in-process:
//   - cc ledbat or ledbat++: strata's low-priority transfer protocol (internal/lowprio, driven by
//     the internal/lowprio/dc binding) on an unordered, unreliable channel, the sender's window
//     from cc/ledbat, streaming a generated, endless stream;
//   - cc sctp: an ordinary reliable, ordered data channel whose only congestion control is
//     Pion's SCTP, the sender writing 16 KiB messages while keeping bufferedAmount bounded.
//
// The receiver records goodput (payload bytes delivered in order to the application); the
// sender records its RTT and congestion window every sampleEvery (LEDBAT: the protocol's
// smoothed RTT and cwnd; SCTP: the association's SRTT and cwnd). It implements endpoint.Flow.
type LowPrio struct {
	env    endpoint.Env
	cc     string
	target time.Duration // ledbat: the flow's target (0: the variant's default)

	snd, rcv *webrtc.PeerConnection
	muxes    []ice.UDPMux
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopped  sync.Once
	errMu    sync.Mutex
	err      error // the first failure while running, returned by Stop
}

// NewLowPrio checks a ledbat flow's spec; nothing runs before Start.
func NewLowPrio(env endpoint.Env) (endpoint.Flow, error) {
	s := env.Spec
	if err := checkEnv(env); err != nil {
		return nil, err
	}
	if env.Clock == nil {
		return nil, fmt.Errorf("flow %s: no clock", s.Name)
	}
	if s.Kind != scenario.KindLEDBAT {
		return nil, fmt.Errorf("flow %s: kind %q is not a data-channel transfer", s.Name, s.Kind)
	}
	f := &LowPrio{env: env, cc: s.CC}
	switch s.CC {
	case ccLEDBAT, ccLEDBATPP:
		for name, v := range s.Params {
			if name != "target" {
				return nil, fmt.Errorf("flow %s: a data-channel LEDBAT transfer takes only the target parameter, not %s", s.Name, name)
			}
			f.target = v.D
		}
	case ccSCTP:
		if len(s.Params) > 0 {
			return nil, fmt.Errorf("flow %s: an SCTP data channel takes no controller params", s.Name)
		}
	default:
		return nil, fmt.Errorf("flow %s: cc %q cannot run on a data channel (ledbat, ledbat++ or sctp)", s.Name, s.CC)
	}
	if s.MSS != 0 || s.DelayedAck != 0 || s.NoSACK || s.RcvWindow != 0 || s.ECN {
		return nil, fmt.Errorf("flow %s: a data-channel transfer takes no mss, delayed_ack, sack, rwnd or ecn "+
			"(the protocol's message size, acknowledgements and window are its own)", s.Name)
	}
	if s.Endpoint == scenario.EndpointBrowser {
		if _, err := os.Stat(browser.DefaultChromium); err != nil {
			return nil, fmt.Errorf("flow %s: endpoint browser needs headless Chromium at %s (apt-get install -y chromium): %w",
				s.Name, browser.DefaultChromium, err)
		}
		return &browserLowPrio{LowPrio: f}, nil
	}
	return f, nil
}

// Start connects the PeerConnections, opens the transfer's channel on both ends and starts
// sending, receiving and sampling.
func (f *LowPrio) Start(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	defer func() {
		if err != nil {
			f.closePeers()
			err = fmt.Errorf("flow %s: %w", f.env.Spec.Name, err)
		}
	}()
	if f.snd, err = f.newPeer(f.env.Src); err != nil {
		return fmt.Errorf("sender's PeerConnection in %s: %w", f.env.Src.Name(), err)
	}
	if f.rcv, err = f.newPeer(f.env.Dst); err != nil {
		return fmt.Errorf("receiver's PeerConnection in %s: %w", f.env.Dst.Name(), err)
	}
	label, init := f.channel()
	sch, err := f.snd.CreateDataChannel(label, init)
	if err != nil {
		return err
	}
	// The LEDBAT binding takes over the channel's handlers and waits for it to open (setting
	// OnOpen twice races inside Pion); the SCTP sender starts once it is open.
	sendOpen := make(chan struct{})
	if f.cc == ccSCTP {
		sch.OnOpen(func() { close(sendOpen) })
	} else {
		close(sendOpen)
	}
	remote := make(chan *webrtc.DataChannel, 1)
	f.rcv.OnDataChannel(func(ch *webrtc.DataChannel) {
		select {
		case remote <- ch:
		default: // only the transfer's channel is expected
		}
	})
	if err := signal(ctx, f.snd, f.rcv); err != nil {
		return err
	}
	var rch *webrtc.DataChannel
	for _, wait := range []func() bool{
		func() bool { _, ok := recvFrom(ctx, sendOpen); return ok },
		func() bool { var ok bool; rch, ok = recvFrom(ctx, remote); return ok },
	} {
		if !wait() {
			return fmt.Errorf("the data channel between %v and %v did not open: %w", f.env.Src.Addr(), f.env.Dst.Addr(), ctx.Err())
		}
	}
	run, stop := context.WithCancel(context.Background())
	f.cancel = stop
	f.startEnds(run, sch, rch)
	return nil
}

// recvFrom waits for a value from c or the end of ctx.
func recvFrom[T any](ctx context.Context, c <-chan T) (T, bool) {
	select {
	case v := <-c:
		return v, true
	case <-ctx.Done():
		var zero T
		return zero, false
	}
}

// newPeer builds a data-channel-only PeerConnection whose ICE socket lives in h.
func (f *LowPrio) newPeer(h endpoint.Host) (*webrtc.PeerConnection, error) {
	se, mux, err := hostSettings(h)
	if err != nil {
		return nil, err
	}
	f.muxes = append(f.muxes, mux)
	return webrtc.NewAPI(webrtc.WithSettingEngine(se)).NewPeerConnection(webrtc.Configuration{})
}

// channel is the transfer channel's label and options.
func (f *LowPrio) channel() (string, *webrtc.DataChannelInit) {
	if f.cc == ccSCTP {
		ordered := true
		return "bulk", &webrtc.DataChannelInit{Ordered: &ordered} // reliable: no maxRetransmits, no maxPacketLifeTime
	}
	return ledbatChannel()
}

// startEnds runs the sender, the receiver and the sampler until run ends.
func (f *LowPrio) startEnds(run context.Context, sch, rch *webrtc.DataChannel) {
	if f.cc == ccSCTP {
		f.goRun(func() error { return sendBulk(run, sch) })
		f.goRun(func() error { receiveBulk(rch, f.env.Rec); return nil })
		f.goRun(func() error { f.sampleSCTP(run); return nil })
		return
	}
	f.goRun(func() error { return f.sendLEDBAT(run, sch) })
	f.goRun(func() error { return f.receiveLEDBAT(run, rch) })
}

// goRun runs fn until it returns; an error it returns before Stop is the flow's error.
func (f *LowPrio) goRun(fn func() error) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := fn(); err != nil && !errors.Is(err, context.Canceled) {
			f.errMu.Lock()
			if f.err == nil {
				f.err = err
			}
			f.errMu.Unlock()
		}
	}()
}

// sampleSCTP records the sending association's smoothed RTT and congestion window.
func (f *LowPrio) sampleSCTP(ctx context.Context) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := f.snd.SCTP().Stats()
		if st.SmoothedRoundTripTime > 0 {
			f.env.Rec.RTT(time.Duration(st.SmoothedRoundTripTime * float64(time.Second)))
		}
		if st.CongestionWindow > 0 {
			f.env.Rec.Cwnd(float64(st.CongestionWindow))
		}
	}
}

// Stop ends the transfer and closes both PeerConnections; it returns the first error the
// endpoints met while running.
func (f *LowPrio) Stop() error { return f.stop(f.closePeers) }

// stop cancels the run, releases the endpoints, waits for the run's goroutines and returns
// release's error or, before it, the first failure while running; only its first call acts.
func (f *LowPrio) stop(release func() error) error {
	var err error
	f.stopped.Do(func() {
		if f.cancel != nil {
			f.cancel()
		}
		err = release()
		f.wg.Wait()
		f.errMu.Lock()
		if f.err != nil {
			err = fmt.Errorf("flow %s: %w", f.env.Spec.Name, f.err)
		}
		f.errMu.Unlock()
	})
	return err
}

func (f *LowPrio) closePeers() error {
	var errs []error
	for _, pc := range []*webrtc.PeerConnection{f.snd, f.rcv} {
		if pc != nil {
			errs = append(errs, pc.Close())
		}
	}
	for _, m := range f.muxes {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}
