// Package flows holds the emulator's flow kinds: real endpoints (kernel TCP, UDP, Pion media)
// running in the hosts' network namespaces.
package flows

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/bwe"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

// Defaults shared with the simulator's media flows (internal/sim/media.go).
const (
	defaultPacketSize = 1200
	headerBudget      = 40 // IP + UDP + RTP fixed header, as the simulator counts them
	defaultFeedback   = 100 * time.Millisecond
	pacerQueueLimit   = 2 * time.Second // the pacer drains its queue within this, as libwebrtc's
	startTimeout      = 10 * time.Second
	hostMTU           = 1500 // the hosts' veths
)

// Media is strata's own media sender on Pion, run between two hosts: a PeerConnection pair with
// DTLS-SRTP and RTCP carrying one video track whose frames come from the simulator's synthetic
// encoder (or, with codec model libvpx, from a real VP8 encoder: media_vpx.go), paced and probed
// as the scenario's controller says. It implements endpoint.Flow.
type Media struct {
	env  endpoint.Env
	spec scenario.Flow
	ctl  sim.Controllers
	opts mediaOptions

	est     *bwe.SendSide
	peers   *peerPair
	send    *mediaSender
	recv    *mediaReceiver
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped sync.Once
}

// mediaOptions are what the controller needs from the transport.
type mediaOptions struct {
	twcc     bool          // transport-wide sequence numbers and feedback
	absSend  bool          // abs-send-time, for a receive-side estimator's send times
	rrLoss   bool          // the loss controller reads RTCP receiver reports (gcc-draft)
	feedback time.Duration // TWCC feedback and receive-side report interval
}

// NewMedia checks the flow and builds its controller; nothing runs before Start.
func NewMedia(env endpoint.Env) (endpoint.Flow, error) {
	f := env.Spec
	if env.Src == nil || env.Dst == nil || env.Rec == nil || env.Clock == nil {
		return nil, fmt.Errorf("media flow %s: the environment lacks hosts, recorder or clock", f.Name)
	}
	info, ok := sim.LookupController(f.CC)
	if !ok || info.Kind != scenario.KindMedia {
		return nil, fmt.Errorf("media flow %s: unknown media controller %q (known: %v)", f.Name, f.CC,
			sim.ControllerNames(scenario.KindMedia))
	}
	ctl, err := info.Build(f.Params, 0)
	if err != nil {
		return nil, fmt.Errorf("media flow %s: %w", f.Name, err)
	}
	if f.PacketSize == 0 {
		f.PacketSize = defaultPacketSize
	}
	if f.Feedback <= 0 {
		f.Feedback = defaultFeedback
	}
	if err := f.Codec.Validate(); err != nil {
		return nil, fmt.Errorf("media flow %s: %w", f.Name, err)
	}
	if f.ECN {
		return nil, fmt.Errorf("media flow %s: ecn is not emulated for media flows: Pion's receiver does not see CE marks, "+
			"so the controller would never hear of them (run it with --engine sim)", f.Name)
	}
	if f.PacketSize > hostMTU {
		return nil, fmt.Errorf("media flow %s: packet size %d is larger than the hosts' %d-byte MTU", f.Name, f.PacketSize, hostMTU)
	}
	m := &Media{env: env, spec: f, ctl: ctl}
	_, m.opts.rrLoss = ctl.Rate.(lossReporter)
	// The draft's sender takes its delay estimate from REMB and its loss from receiver reports:
	// no transport-wide feedback, as in the browsers seed 003 measured.
	m.opts.twcc = !(m.opts.rrLoss && ctl.Rx != nil)
	m.opts.rrLoss = m.opts.rrLoss && !m.opts.twcc
	m.opts.absSend = ctl.Rx != nil
	m.opts.feedback = f.Feedback
	if f.PacketSize <= m.overhead()+1 {
		return nil, fmt.Errorf("media flow %s: packet size %d leaves no room for payload after %d header bytes",
			f.Name, f.PacketSize, m.overhead())
	}
	return m, nil
}

// lossReporter is the draft sender's loss controller input (gcc.DraftSender).
type lossReporter interface {
	OnLossReport(now time.Duration, lost, expected int)
}

// overhead is every byte of a media packet on the wire that is not payload: the simulator's 40 B
// of IP/UDP/RTP headers, the RTP header extensions in use and the SRTP authentication tag.
func (m *Media) overhead() int {
	ext := 0
	if m.opts.twcc {
		ext += 1 + 2 // one-byte header form: id/len byte + 16-bit sequence number
	}
	if m.opts.absSend {
		ext += 1 + 3
	}
	if ext > 0 {
		ext = 4 + (ext+3)/4*4 // extension header, padded to 32-bit words
	}
	return headerBudget + ext + srtpTagSize
}

// Start connects the PeerConnection pair and starts sending; it returns once the first media
// packet has arrived at the receiver.
func (m *Media) Start(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	est := bwe.NewSendSide(&rttRecorder{RateController: m.ctl.Rate, rec: m.env.Rec}, 50*time.Millisecond)
	m.recv = newMediaReceiver(m, est.Estimator())
	m.est = est
	peers, err := newPeerPair(sctx, m, est)
	if err != nil {
		_ = est.Close()
		return fmt.Errorf("media flow %s: %w", m.spec.Name, err)
	}
	m.peers = peers
	runCtx, runCancel := context.WithCancel(context.Background())
	m.cancel = runCancel
	if m.send, err = newMediaSender(m, peers.track, est.Estimator(), peers.absSendTimeID()); err != nil {
		_ = m.Stop()
		return fmt.Errorf("media flow %s: %w", m.spec.Name, err)
	}
	if m.send.vpx != nil {
		m.run(func() { m.send.vpx.run(runCtx) })
	}
	m.run(func() { m.send.rtcpLoop(peers.sender) })
	m.run(func() { m.send.loop(runCtx) })
	select {
	case in := <-peers.tracks:
		m.run(func() { m.recv.readLoop(in) })
		m.run(func() { m.recv.rtcpLoop(in) })
		m.run(func() { m.recv.reportLoop(runCtx, peers.answer) })
	case <-sctx.Done():
		_ = m.Stop()
		return fmt.Errorf("media flow %s: no media reached the receiver within %v", m.spec.Name, startTimeout)
	}
	select {
	case <-m.recv.first:
		return nil
	case <-sctx.Done():
		_ = m.Stop()
		return fmt.Errorf("media flow %s: no media reached the receiver within %v", m.spec.Name, startTimeout)
	}
}

func (m *Media) run(f func()) {
	m.wg.Add(1)
	go func() { defer m.wg.Done(); f() }()
}

// Stop ends sending and closes both PeerConnections (which ends the read loops).
func (m *Media) Stop() error {
	var err error
	m.stopped.Do(func() {
		if m.cancel != nil {
			m.cancel()
		}
		if m.peers != nil {
			err = m.peers.close()
		}
		m.wg.Wait()
		if m.est != nil {
			_ = m.est.Close() // the PeerConnection closes it too; Close is idempotent
		}
	})
	return err
}

// rttRecorder records every RTT sample the transport gives the controller.
type rttRecorder struct {
	cc.RateController
	rec endpoint.Recorder
}

func (r *rttRecorder) OnRTT(now, rtt time.Duration) {
	r.rec.RTT(rtt)
	r.RateController.OnRTT(now, rtt)
}
