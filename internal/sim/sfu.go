package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/gcc"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// SFUConfig describes a simulated SFU node: it forwards each session's layers to the session's
// receiver as a per-subscription layer policy decides, running the same internal/sfu/policy code
// as the videoroom. Optionally a network controller (NetCtl) informs the network and hybrid
// policies, and a Switch at the SFU's egress drops what the controller does not allow.
type SFUConfig struct {
	// Node is the SFU's node name (the From of every session's first downstream link).
	Node string
	// Policy names the layer policy of every subscription (policy.Names); PolicyConfig tunes it.
	Policy       string
	PolicyConfig policy.Config
	// DecideInterval: how often each subscription's policy decides (default 100 ms).
	DecideInterval time.Duration
	// FeedbackInterval: how often receivers send transport feedback with their estimate
	// (default 100 ms); ReportInterval: how often they send loss reports (RTCP receiver reports,
	// default 1 s).
	FeedbackInterval, ReportInterval time.Duration
	// PacketSize is the largest packet on the wire and Overhead its header bytes (1200 and 40).
	PacketSize, Overhead int
	// Net, when set, is the controller whose decisions the network and hybrid policies follow;
	// Switch, when set, enforces its drop rules at the SFU's egress.
	Net    *NetCtl
	Switch *Switch
}

// SFU is a simulated SFU node.
type SFU struct {
	sim      *Sim
	cfg      SFUConfig
	sessions []*SFUSession
}

// NewSFU returns an SFU node; add sessions with AddSession.
func NewSFU(s *Sim, cfg SFUConfig) (*SFU, error) {
	if cfg.DecideInterval <= 0 {
		cfg.DecideInterval = 100 * time.Millisecond
	}
	if cfg.FeedbackInterval <= 0 {
		cfg.FeedbackInterval = 100 * time.Millisecond
	}
	if cfg.ReportInterval <= 0 {
		cfg.ReportInterval = time.Second
	}
	if cfg.PacketSize == 0 {
		cfg.PacketSize = 1200
	}
	if cfg.Overhead == 0 {
		cfg.Overhead = 40
	}
	if cfg.PacketSize <= cfg.Overhead {
		return nil, fmt.Errorf("sfu %s: packet size %d too small", cfg.Node, cfg.PacketSize)
	}
	if _, err := policy.New(cfg.Policy, cfg.PolicyConfig); err != nil {
		return nil, fmt.Errorf("sfu %s: %w", cfg.Node, err)
	}
	return &SFU{sim: s, cfg: cfg}, nil
}

// Config returns the SFU's configuration (defaults filled in).
func (u *SFU) Config() SFUConfig { return u.cfg }

// Sessions returns the sessions in the order they were added.
func (u *SFU) Sessions() []*SFUSession { return u.sessions }

// SFUSessionConfig is one session: a layered publisher whose layers reach one receiver through
// the SFU. The session's name is also its stream and subscription id at the controller.
type SFUSessionConfig struct {
	Name string
	// Layers are each layer's own rate in bit/s, base first (1 to 3 layers: base, spatial,
	// temporal, as in seed 000).
	Layers []float64
	// Codec is the frame model of every layer (its Layers field is ignored).
	Codec CodecConfig
	// Up: sender → SFU; Down: SFU → receiver; Reverse: receiver → SFU (feedback).
	Up, Down, Reverse []*Link
	Start, Stop       time.Duration
}

// rungLayers maps the seed's cumulative layers onto the policy's layer names: base = s0t0,
// base+spatial = s1t0, all three = s1t1.
var rungLayers = [...]policy.Layer{{Spatial: 0, Temporal: 0}, {Spatial: 1, Temporal: 0}, {Spatial: 1, Temporal: 1}}

// SFUSession is one session as it crosses the SFU. It is a Flow: its statistics are what the
// receiver gets.
type SFUSession struct {
	sim    *Sim
	sfu    *SFU
	cfg    SFUSessionConfig
	stats  *FlowStats
	layers *SessionStats
	src    *layeredSource
	down   Route
	rev    Route
	rx     *sfuReceiver
	pol    policy.Policy
	in     policy.Input
	out    policy.Output
	fwd    int // layers forwarded now
	seq    int64

	// feedback state, as the SFU last heard it
	estimate, received cc.Bitrate
	lastEstimate       cc.Bitrate
	congested          bool
	loss, fbLoss       float64
	fbLossKnown        bool // a feedback message reported packets
	padCredit          float64
}

const (
	evSFUDecide int32 = iota + 1
	evSFUPad
)

const padTick = 5 * time.Millisecond

// AddSession adds a session and registers it with the controller, if any.
func (u *SFU) AddSession(cfg SFUSessionConfig) (*SFUSession, error) {
	if len(cfg.Layers) == 0 || len(cfg.Layers) > len(rungLayers) {
		return nil, fmt.Errorf("sfu session %s: want 1 to %d layers, got %d", cfg.Name, len(rungLayers), len(cfg.Layers))
	}
	for i, r := range cfg.Layers {
		if r <= 0 {
			return nil, fmt.Errorf("sfu session %s: layer %d rate must be positive", cfg.Name, i)
		}
	}
	if len(cfg.Up) == 0 || len(cfg.Down) == 0 || len(cfg.Reverse) == 0 {
		return nil, fmt.Errorf("sfu session %s: needs up, down and reverse links", cfg.Name)
	}
	if cfg.Down[0].cfg.From != u.cfg.Node {
		return nil, fmt.Errorf("sfu session %s: the downstream path starts at %s, not at the SFU %s", cfg.Name, cfg.Down[0].cfg.From, u.cfg.Node)
	}
	if err := errors.Join(cfg.Codec.Validate(), cfg.Codec.Simulated()); err != nil {
		return nil, fmt.Errorf("sfu session %s: %w", cfg.Name, err)
	}
	pol, err := policy.New(u.cfg.Policy, u.cfg.PolicyConfig)
	if err != nil {
		return nil, err
	}
	sess := &SFUSession{sim: u.sim, sfu: u, cfg: cfg, pol: pol, loss: -1}
	sess.stats = newFlowStats(u.sim, cfg.Name, "media", "sfu/"+pol.Name())
	sess.stats.Start, sess.stats.Stop, sess.stats.Forward, sess.stats.Reverse = cfg.Start, cfg.Stop, cfg.Down, cfg.Reverse
	sess.layers = newSessionStats(u.sim, cfg.Name, pol.Name(), len(cfg.Layers))
	sess.src = newLayeredSource(u.sim, sess)
	sess.rx = &sfuReceiver{sess: sess, est: gcc.NewReceiver()}
	sess.down = Route{Links: cfg.Down, Dst: sess.rx}
	sess.rev = Route{Links: cfg.Reverse, Dst: sfuFeedbackSink{sess}}
	sess.in.Tracks = []policy.Track{{Max: policy.TopLayer, Target: policy.NoLayer, Current: policy.NoLayer}}
	for i := range cfg.Layers {
		sum := 0.0
		for _, x := range cfg.Layers[:i+1] {
			sum += x
		}
		l := rungLayers[i]
		sess.in.Tracks[0].Rates[l.Spatial][l.Temporal] = cc.BitrateFromFloat(sum)
	}
	if u.cfg.Net != nil {
		if err := u.cfg.Net.register(sess); err != nil {
			return nil, err
		}
	}
	u.sessions = append(u.sessions, sess)
	u.sim.AddFlow(sess)
	return sess, nil
}

// Stats returns what the receiver got (all layers together).
func (sess *SFUSession) Stats() *FlowStats { return sess.stats }

// Layers returns the per-layer statistics.
func (sess *SFUSession) Layers() *SessionStats { return sess.layers }

// Name is the session's name.
func (sess *SFUSession) Name() string { return sess.cfg.Name }

func (sess *SFUSession) begin() {
	s := sess.sim
	s.Schedule(sess.cfg.Start, sess.src, evSrcFrame, 0, nil)
	s.Schedule(sess.cfg.Start, sess, evSFUDecide, 0, nil)
	s.Schedule(sess.cfg.Start+padTick, sess, evSFUPad, 0, nil)
	s.Schedule(sess.cfg.Start+sess.sfu.cfg.FeedbackInterval, sess.rx, evRxFeedback, 0, nil)
	s.Schedule(sess.cfg.Start+sess.sfu.cfg.ReportInterval, sess.rx, evRxReport, 0, nil)
	if n := sess.sfu.cfg.Net; n != nil {
		n.start()
	}
}

func (sess *SFUSession) routes() []*Route {
	return []*Route{&sess.src.up, &sess.down, &sess.rev}
}

// HandleEvent runs the policy or sends padding.
func (sess *SFUSession) HandleEvent(ev Event) {
	if ev.At >= sess.cfg.Stop {
		return
	}
	switch ev.Kind {
	case evSFUDecide:
		sess.decide(ev.At)
		sess.sim.Schedule(ev.At+sess.sfu.cfg.DecideInterval, sess, evSFUDecide, 0, nil)
	case evSFUPad:
		sess.pad(ev.At)
		sess.sim.Schedule(ev.At+padTick, sess, evSFUPad, 0, nil)
	}
}

// decide runs the subscription's policy on what the SFU knows now.
func (sess *SFUSession) decide(now time.Duration) {
	in := &sess.in
	in.Now, in.Estimate, in.Received = now, sess.estimate, sess.received
	in.Congested, in.Loss, in.FeedbackLoss, in.LossKnown = sess.congested, sess.loss, sess.fbLoss, sess.fbLossKnown
	in.RTT, in.CanProbe = sess.rtt(), true
	tr := &in.Tracks[0]
	tr.NetKnown = false
	if n := sess.sfu.cfg.Net; n != nil {
		tr.NetLayers, tr.NetKnown = n.Decision(sess.cfg.Name)
	}
	sess.pol.Decide(in, &sess.out)
	sess.loss = -1 // a receiver report is used once
	target := sess.out.Targets[0]
	tr.Target, tr.Current = target, target // the simulated SFU switches at once
	sess.fwd = layersOf(target, len(sess.cfg.Layers))
	sess.layers.setForwarded(now, sess.fwd)
}

// layersOf is how many of n cumulative layers a policy layer stands for.
func layersOf(l policy.Layer, n int) int {
	k := 0
	for i := 0; i < n; i++ {
		if !l.Less(rungLayers[i]) {
			k = i + 1
		}
	}
	return k
}

// rtt is the downstream and feedback paths' propagation delay (queues not included).
func (sess *SFUSession) rtt() time.Duration {
	var d time.Duration
	for _, l := range sess.cfg.Down {
		d += l.cfg.Delay
	}
	for _, l := range sess.cfg.Reverse {
		d += l.cfg.Delay
	}
	return d
}

// forward handles a packet of the session reaching the SFU: layers above the policy's choice stop
// here, the switch drops what the controller forbids, the rest goes to the receiver.
func (sess *SFUSession) forward(p *Packet) {
	now := sess.sim.Now()
	layer := int(p.Layer)
	if now >= sess.cfg.Stop || layer >= sess.fwd {
		sess.sim.Free(p)
		return
	}
	if sw := sess.sfu.cfg.Switch; sw != nil && sw.Drops(sess.cfg.Name, layer) {
		sess.layers.onSwitchDrop(layer)
		sess.sim.Free(p)
		return
	}
	sess.send(now, p)
	sess.layers.onSent(now, layer)
}

func (sess *SFUSession) send(now time.Duration, p *Packet) {
	sess.seq++
	p.Seq, p.SentAt, p.Stats, p.Queued, p.Managed = sess.seq, now, sess.stats, 0, true
	sess.stats.onSent(now, p.Size)
	sess.sim.Send(p, &sess.down)
}

// pad sends the padding the policy asks for (probing for an upgrade).
func (sess *SFUSession) pad(now time.Duration) {
	rate := sess.out.Probe.Bps()
	if rate <= 0 {
		sess.padCredit = 0
		return
	}
	size := sess.sfu.cfg.PacketSize
	sess.padCredit += rate * padTick.Seconds()
	for sess.padCredit >= float64(size*8) {
		sess.padCredit -= float64(size * 8)
		p := sess.sim.NewPacket()
		p.Kind, p.Size, p.Padding, p.Layer = KindMedia, size, true, -1
		sess.send(now, p)
	}
}

// sfuFeedbackSink is where the receiver's feedback reaches the SFU.
type sfuFeedbackSink struct{ sess *SFUSession }

// Receive takes a feedback packet: Rx.Rate is the receiver's estimate (REMB), Rx.Recv its receive
// rate, Rx.Signal the loss fraction of a receiver report (negative: none in this packet), and the
// per-packet reports give the transport-feedback loss.
func (f sfuFeedbackSink) Receive(p *Packet) {
	sess := f.sess
	if p.RxValid && p.Rx.Rate > 0 {
		est := cc.BitrateFromFloat(p.Rx.Rate)
		sess.congested = est < sess.lastEstimate*97/100
		sess.lastEstimate, sess.estimate = est, est
	}
	if p.RxValid {
		sess.received = cc.BitrateFromFloat(p.Rx.Recv)
		if p.Rx.Signal >= 0 {
			sess.loss = p.Rx.Signal
		}
	}
	if n := len(p.Reports); n > 0 {
		lost := 0
		for _, r := range p.Reports {
			if r.Lost {
				lost++
			}
		}
		sess.fbLoss, sess.fbLossKnown = float64(lost)/float64(n), true
	}
	sess.sim.Free(p)
}
