// Package service serves low-priority transfers on every PeerConnection of the server, whatever
// plugin owns it: a data channel the client opens with the label lowprio:get:<name> gets <name>
// (a file under lowprio.dir, or the generated stream gen:<bytes>) sent by LEDBAT; one labelled
// lowprio:put:<name> is received into lowprio.upload_dir (or counted and discarded). The Peer
// hands the service its channels (peer.ChannelService); each transfer runs on its own goroutine
// through internal/lowprio/dc and ends with its channel, never the PeerConnection.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/lowprio"
	"github.com/strata-rtc/strata/internal/lowprio/dc"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// ShareHeadroom caps a download at what the PeerConnection's media leaves of its estimate.
const ShareHeadroom = "headroom"

// Service serves the low-priority transfers of one server.
type Service struct {
	cfg            config.LowPrio
	log            *slog.Logger
	files, uploads *os.Root // nil: not configured
	ctx            context.Context
	cancel         context.CancelFunc

	mu     sync.Mutex
	closed bool
	peers  map[*peer.Peer]*peerState
	wg     sync.WaitGroup // running transfers
}

// New opens the configured directories.
func New(cfg config.LowPrio, log *slog.Logger) (*Service, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	files, err := openRoot(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("lowprio.dir: %w", err)
	}
	uploads, err := openRoot(cfg.UploadDir)
	if err != nil {
		if files != nil {
			_ = files.Close()
		}
		return nil, fmt.Errorf("lowprio.upload_dir: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{cfg: cfg, log: log, files: files, uploads: uploads, ctx: ctx, cancel: cancel,
		peers: map[*peer.Peer]*peerState{}}, nil
}

// Option is the peer.Factory option that has every PeerConnection hand the service its
// low-priority channels.
func (s *Service) Option() peer.Option {
	return peer.WithChannelService(peer.ChannelService{Prefix: dc.LabelPrefix, Serve: s.serve})
}

// Close ends every transfer (each with a RESET) and waits for them.
func (s *Service) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	for _, r := range []*os.Root{s.files, s.uploads} {
		if r != nil {
			_ = r.Close()
		}
	}
}

// serve takes a channel the remote peer opened, on Pion's goroutine that accepts channels: it
// checks the label, opens the file or the upload (quick local calls) and attaches the transfer
// at once, so the client's first messages are not lost; the transfer runs on its own goroutine.
func (s *Service) serve(p *peer.Peer, ch *webrtc.DataChannel) {
	ps := s.state(p)
	if ps == nil {
		go reject(ch, lowprio.CodeAbort, errors.New("the server is shutting down"))
		return
	}
	t := &transfer{label: ch.Label(), started: time.Now(), size: -1, state: stateRunning}
	verb, name, err := dc.ParseLabel(t.label)
	t.direction, t.name = verb, name
	if err != nil {
		t.name = t.label[:min(len(t.label), dc.MaxName)]
		s.refuse(ps, t, ch, lowprio.CodeProtocol, err)
		return
	}
	if !ps.admit(t, s.cfg.MaxTransfers) {
		s.refuse(ps, t, ch, lowprio.CodeAbort, fmt.Errorf("too many transfers on this PeerConnection (%d)", s.cfg.MaxTransfers))
		return
	}
	run, err := s.prepare(p, ch, t)
	if err != nil {
		ps.finish(t, err, true)
		go reject(ch, lowprio.CodeAbort, err)
		return
	}
	s.wg.Add(1) // state() returned ps, so Close has not begun waiting
	go func() {
		defer s.wg.Done()
		st, err := run(ps.ctx)
		ps.finish(t, err, false)
		info := t.info()
		s.log.Info("low-priority transfer ended", "name", info.Name, "direction", info.Direction,
			"bytes", info.Bytes, "seconds", info.Seconds, "retransmits", st.Retransmits,
			"timeouts", st.Timeouts, "dropped", st.Dropped, "err", err)
	}()
}

// refuse ends a channel's transfer before it started.
func (s *Service) refuse(ps *peerState, t *transfer, ch *webrtc.DataChannel, code uint16, err error) {
	ps.refuse(t, err)
	s.log.Debug("low-priority transfer refused", "label", t.name, "err", err)
	go reject(ch, code, err)
}

// state returns p's low-priority state, created with the first transfer; nil once closing. The
// state's context ends with the PeerConnection or the service.
func (s *Service) state(p *peer.Peer) *peerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if ps := s.peers[p]; ps != nil {
		return ps
	}
	ps := newPeerState(s.ctx)
	s.peers[p] = ps
	p.SetLowPrioInfo(ps.info)
	go func() {
		select {
		case <-p.Closed():
		case <-ps.ctx.Done():
		}
		ps.cancel()
		s.mu.Lock()
		delete(s.peers, p)
		s.mu.Unlock()
	}()
	return ps
}

// prepare opens what t sends or where it writes and attaches the transfer to ch; the function
// it returns runs the transfer to its end.
func (s *Service) prepare(p *peer.Peer, ch *webrtc.DataChannel, t *transfer) (func(context.Context) (dc.Stats, error), error) {
	opts := dc.Options{Variant: s.cfg.Variant, Target: s.cfg.TargetDelay, Progress: t.progress}
	if t.direction == dc.VerbPut {
		u, err := newUpload(s.uploads, t.name, s.cfg.MaxUpload)
		if err != nil {
			return nil, err
		}
		tr := dc.Attach(ch, opts)
		return func(ctx context.Context) (dc.Stats, error) {
			st, err := tr.Receive(ctx, u)
			if err != nil {
				u.abort()
				return st, err
			}
			return st, u.commit()
		}, nil
	}
	r, size, err := s.open(t.name)
	if err != nil {
		return nil, err
	}
	t.setSize(size)
	if s.cfg.Share == ShareHeadroom {
		opts.Cap = headroom(p, t)
	}
	tr := dc.Attach(ch, opts)
	return func(ctx context.Context) (dc.Stats, error) {
		defer func() { _ = r.Close() }()
		return tr.Send(ctx, r)
	}, nil
}

// open returns what a get of name sends, and its length.
func (s *Service) open(name string) (io.ReadCloser, int64, error) {
	if n, ok, err := dc.ParseGenerated(name); ok {
		return io.NopCloser(dc.Generated(n)), n, err
	}
	return openFile(s.files, name)
}

// headroom is a download's rate cap on a PeerConnection with media. The media comes first:
// while the send-side estimator of the path towards the peer detects congestion (GCC's delay
// detector over-using, or its overload signal), the transfer is held to max(0, estimate −
// media), the estimate minus the rate the media is acknowledged at (the estimator sees only
// RTP, so the transfer's bytes are in neither), and the queue drains for the media. Once the
// congestion is over the cap rises by capRamp a second, so the transfer comes back more slowly
// than its LEDBAT window would let it (about a message per RTT: 220 kbit/s a second on a 40 ms
// path) and does not refill the queue at once; when the transfer no longer uses it, it is
// lifted. Before the
// first congestion, and while no media is acknowledged, LEDBAT alone finds the spare capacity: an
// estimator that only sees the media is application-limited (GCC starts at its initial 300
// kbit/s and stays within 1.5 times what is acknowledged), so its estimate follows the media,
// not the path, and a permanent cap would leave most of the spare capacity unused. nil without
// an estimator (congestion control off). dc raises a cap below dc.MinCap to it.
func headroom(p *peer.Peer, t *transfer) func() cc.Bitrate {
	e := p.Estimator()
	if e == nil {
		return nil
	}
	g := governor{cap: uncapped, last: time.Now()}
	return func() cc.Bitrate {
		c := g.next(e.Path(), time.Now(), t.currentRate())
		t.setCap(c)
		return c
	}
}

// governor is headroom's state: the cap in force and when it was last updated.
type governor struct {
	cap  cc.Bitrate
	last time.Time
}

// next is the cap at now, from the path's signals and the transfer's current rate.
func (g *governor) next(path policy.Path, now time.Time, rate cc.Bitrate) cc.Bitrate {
	switch {
	case path.Received > 0 && (path.Congested || path.Overload):
		g.cap = max(path.Estimate-path.Received, 0)
	case g.cap != uncapped:
		g.cap += cc.Bitrate(float64(capRamp) * now.Sub(g.last).Seconds())
		if g.cap > max(rate, dc.MinCap)+capSlack { // the transfer no longer uses it
			g.cap = uncapped
		}
	}
	g.last = now
	return g.cap
}

// capRamp is how fast a download's cap rises after congestion, per second; capSlack how far
// above the transfer's rate it may go before it is lifted (four seconds of ramp: the rate,
// measured every 250 ms, lags the cap).
const (
	capRamp  = 50 * cc.Kbps
	capSlack = 4 * capRamp
)

// uncapped is a cap that never binds (handle_info shows none).
const uncapped = cc.MaxBitrate

// rejectLinger is how long a refused channel stays open for its RESET to be read: the peer
// closes it on reading the RESET; closing it at once can overtake the message (the client then
// sees a close without a reason).
const rejectLinger = 2 * time.Second

// rejectRepeats are the times after the first RESET at which it is sent again while the channel
// lingers. The RESET goes out as soon as the channel opens, and the opener may not have given Pion
// its message handler yet (its CreateDataChannel opens the channel before it returns): Pion drops
// a message that finds no handler, and a RESET has no retransmission of its own. A peer that read
// the first one has closed the channel, and the repeats fail quietly.
var rejectRepeats = [...]time.Duration{100 * time.Millisecond, 400 * time.Millisecond, time.Second}

// reject ends a transfer that will not run: a RESET with the reason, repeated while the channel
// lingers, and the channel closed.
func reject(ch *webrtc.DataChannel, code uint16, err error) {
	ch.OnOpen(func() { // at once if already open
		var buf [512]byte
		b, _ := lowprio.EncodeReset(buf[:0], 1, code, err.Error())
		_ = ch.Send(b)
		for _, at := range rejectRepeats {
			time.AfterFunc(at, func() {
				if ch.ReadyState() == webrtc.DataChannelStateOpen {
					_ = ch.Send(b)
				}
			})
		}
		time.AfterFunc(rejectLinger, func() { _ = ch.Close() })
	})
}

func (t *transfer) progress(pr dc.Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bytes, t.rate, t.rtt, t.queueing, t.cwnd = int64(pr.Bytes), pr.Rate, pr.RTT, pr.QueueDelay, pr.Cwnd
}

// rate is the transfer's current rate.
func (t *transfer) currentRate() cc.Bitrate {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rate
}

func (t *transfer) setSize(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.size = n
}

func (t *transfer) setCap(c cc.Bitrate) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.capRate = c
	if c == uncapped {
		t.capRate = 0
	}
}
