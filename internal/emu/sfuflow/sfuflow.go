// Package sfuflow runs a scenario's `sfu:` block (seed 000) on real stacks: one `strata serve`
// in the SFU node's host with the scenario's layer policy (and `strata netctl serve` when the
// scenario turns the network controller on), and per session a Pion publisher sending VP8
// simulcast at the session's layer rates and a subscriber that counts what the SFU forwards to
// it per layer: Pion, or headless Chromium joining through janus.js (`subscriber: browser`).
//
// A simulated session forwards cumulative layers (base, +spatial, +temporal); a real VP8
// publisher sends simulcast, one encoding per layer, of which the SFU forwards one. So layer k
// of a session here is the encoding at the sum of the first k layer rates, at its own
// resolution, and a session at its top layer counts all its packets under that layer.
//
// A session with `layering: temporal` instead sends one VP8 stream of temporal layers at its
// layer rates (TL0, TL1, TL2 for the paper's base, spatial and temporal; a session of one or two
// layers sends TL0, or TL0 and TL1), which the
// SFU (or a switch) thins by dropping whole layers; its subscriber counts every packet under the
// TID its descriptor carries.
package sfuflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/emu/browser"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/rig"
	"github.com/strata-rtc/strata/internal/sim"
)

// Session is one session's place in the network.
type Session struct {
	// Name is the scenario session's name (scenario.SFUSession.Name).
	Name string
	// Pub sends towards the SFU along path[:sfu]; Sub receives from it along path[sfu:].
	Pub, Sub endpoint.Host
	// Rec takes the downlink's goodput (media payload the subscriber received); may be nil.
	Rec endpoint.Recorder
}

// Switch is an OpenFlow switch at a node: its management target ("unix:/path/br0.mgmt"), and the
// links it feeds with, for each, the interface the link leaves the node by (also the switch's port
// the link's packets enter by): the controller's topology gives it as the link's interface.
type Switch struct {
	Node, Target string
	Links, Ports []string
}

// SwitchesOf are the network's switches (its switched links) as Env takes them.
func SwitchesOf(n *topo.Network) []Switch {
	var out []Switch
	for _, sw := range n.Switches() {
		out = append(out, Switch{Node: sw.Node, Target: sw.Target, Links: sw.Links, Ports: sw.Ports})
	}
	return out
}

// Env is what the SFU's sessions need.
type Env struct {
	SFU     *scenario.SFU
	SFUHost endpoint.Host
	// Sessions are the hosts of SFU.Sessions, by name (every scenario session needs one).
	Sessions []Session
	// Links are the scenario's links: the network controller's topology.
	Links []sim.LinkConfig
	// Switches are the OpenFlow switches of the network (links with `switch: ovs`), which the
	// network controller programs (strata netctl serve -switch NODE=TARGET).
	Switches []Switch
	// LinkLoad, when set, is a link's load (bit/s) as the emulator measured it over the last
	// meter interval: the network controller gets it every 500 ms, as the simulator feeds it its
	// links' meters. Without it the controller assumes its links carry nothing else.
	LinkLoad func(link string) (bps float64, ok bool)
	// Classes, when set, is a session's downlink (SFU → subscriber) data packets per DSCP as the
	// emulator counted them. Once the SFU marks a temporal session's layers (LayerMarks), its
	// per-layer losses come from these counts (applyLinkCounts); until then, and for simulcast
	// sessions, from the subscriber's sequence numbers.
	Classes func(session string) []topo.ClassCounts
	// LayerMarks are the DSCPs of temporal layers 0, 1 and 2 (the SFU's defaults when zero); with
	// a switch on the SFU's node, strata is configured to mark with them.
	LayerMarks [3]uint8
	// Binary is the strata executable; Dir takes its configuration and logs (a temporary
	// directory when empty) and the browser subscribers' profiles; MediaDir caches the encoded
	// clips (mediasrc.DefaultDir when empty).
	Binary, Dir, MediaDir string
	// Chromium is the browser that `subscriber: browser` sessions run (browser.DefaultChromium
	// when empty).
	Chromium string
	// Duration and Interval are the run's length and its statistics' bins (the scenario's;
	// Interval defaults to 100 ms, Duration to the sessions' last stop).
	Duration, Interval time.Duration
	Clock              endpoint.Clock
	Log                io.Writer
}

// Sessions are the running SFU and its sessions.
type Sessions struct {
	env     Env
	dir     string
	tmpDir  bool
	server  string       // the Janus API's URL
	netctl  string       // the network controller's URL, "" without
	drops   *switchDrops // what the switch at the SFU dropped on the controller's rules, nil without
	room    uint64
	runs    []*run
	procs   []*rig.Process
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
	stopped bool
}

const room = 1

// New checks env and prepares the sessions (their clips, encoded with ffmpeg the first time a
// rate is used: call it before the run's clock starts); Start runs them.
func New(env Env) (*Sessions, error) {
	if env.SFU == nil || env.SFUHost == nil || env.Clock == nil {
		return nil, errors.New("sfuflow: the SFU, its host and a clock are needed")
	}
	if env.Binary == "" {
		return nil, errors.New("sfuflow: the strata binary is needed")
	}
	if env.Log == nil {
		env.Log = io.Discard
	}
	if env.Interval <= 0 {
		env.Interval = 100 * time.Millisecond
	}
	if env.Chromium == "" {
		env.Chromium = browser.DefaultChromium
	}
	for _, ss := range env.SFU.Sessions {
		env.Duration = max(env.Duration, ss.Stop)
		if ss.Subscriber == scenario.SubscriberBrowser {
			if err := checkBrowser(env.Chromium); err != nil {
				return nil, fmt.Errorf("sfuflow: session %s: %w", ss.Name, err)
			}
		}
	}
	s := &Sessions{env: env, dir: env.Dir, room: room}
	byName := map[string]Session{}
	for _, h := range env.Sessions {
		byName[h.Name] = h
	}
	media := map[string]*mediasrc.Media{}
	for i, ss := range env.SFU.Sessions {
		h, ok := byName[ss.Name]
		if !ok || h.Pub == nil || h.Sub == nil {
			return nil, fmt.Errorf("sfuflow: session %s has no publisher or subscriber host", ss.Name)
		}
		r, err := newRun(s, i, ss, h, media)
		if err != nil {
			return nil, err
		}
		s.runs = append(s.runs, r)
	}
	return s, nil
}

// Start runs strata (and the network controller) in the SFU's host, creates the room and starts
// the sessions due by now; later ones start (and every one stops) at its time on the run's
// clock. It returns once the sessions due have media flowing, or with an error after undoing
// what it started.
func (s *Sessions) Start(ctx context.Context) error {
	if err := s.start(ctx); err != nil {
		return errors.Join(err, s.Stop())
	}
	return nil
}

func (s *Sessions) start(ctx context.Context) error {
	if err := s.startServer(ctx); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if s.netctl != "" && !s.tmpDir {
		s.wg.Add(1)
		go s.recordDecisions(rctx)
	}
	now := s.env.Clock.Now()
	for _, r := range s.runs {
		if r.spec.Start > now {
			continue
		}
		if err := r.start(ctx); err != nil {
			return fmt.Errorf("sfuflow: session %s: %w", r.spec.Name, err)
		}
	}
	for _, r := range s.runs {
		s.wg.Add(1)
		go s.schedule(rctx, r)
	}
	if s.netctl != "" && s.env.LinkLoad != nil {
		s.wg.Add(1)
		go s.feedLoads(rctx)
	}
	if sw, ok := s.sfuSwitch(); ok && s.netctl != "" {
		s.drops = newSwitchDrops(sw.Target)
		s.wg.Add(1)
		go s.watchSwitch(rctx)
	}
	return nil
}

// schedule starts r at its start time (unless already started) and stops it at its stop time.
func (s *Sessions) schedule(ctx context.Context, r *run) {
	defer s.wg.Done()
	if !s.sleepUntil(ctx, r.spec.Start) {
		return
	}
	if err := r.start(ctx); err != nil {
		s.fail(fmt.Errorf("session %s: %w", r.spec.Name, err))
		return
	}
	if s.sleepUntil(ctx, r.spec.Stop) {
		if s.drops != nil {
			// The switch's counters of a subscription go with its rules when it leaves.
			s.drops.poll(ctx)
		}
		r.stop()
	}
}

func (s *Sessions) sleepUntil(ctx context.Context, at time.Duration) bool {
	if d := at - s.env.Clock.Now(); d > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
		}
	}
	return ctx.Err() == nil
}

func (s *Sessions) fail(err error) {
	fmt.Fprintf(s.env.Log, "sfuflow: %v\n", err)
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

// Err returns what went wrong with sessions started after Start returned.
func (s *Sessions) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// Stop ends every session and then strata's processes (by PID); it is safe to call twice.
func (s *Sessions) Stop() error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	if s.drops != nil {
		// The last counts, before the subscribers leave and the controller takes its rules off.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		s.drops.poll(ctx)
		cancel()
	}
	// The controller's state is kept while the sessions still run (a subscriber's end withdraws
	// its decision); failing to read it is logged, not the run's error.
	if err := s.saveNetctlState(); err != nil {
		fmt.Fprintf(s.env.Log, "%v\n", err)
	}
	var errs []error
	for _, r := range s.runs {
		errs = append(errs, r.stop())
	}
	for _, p := range slices.Backward(s.procs) {
		errs = append(errs, p.Stop(5*time.Second))
	}
	if s.tmpDir {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// Stats are the sessions' per-layer counters in the scenario's order, as the simulator's
// (metrics.RecordedFlow.Session of each session's downlink flow).
func (s *Sessions) Stats() []*sim.SessionStats {
	bins := int((s.env.Duration + s.env.Interval - 1) / s.env.Interval)
	out := make([]*sim.SessionStats, len(s.runs))
	marks := s.env.layerMarks()
	for i, r := range s.runs {
		out[i] = r.count.stats(r.spec.Name, s.env.SFU.Policy, bins, s.env.Interval)
		if r.spec.Layering != scenario.LayeringTemporal {
			continue
		}
		if s.env.Classes != nil && applyLinkCounts(out[i], s.env.Classes(r.spec.Name), marks) && r.linkCounts.CompareAndSwap(false, true) {
			fmt.Fprintf(s.env.Log, "sfuflow: session %s: layers marked %v on the downlink: per-layer loss from the link's counts\n",
				r.spec.Name, marks)
		}
		if s.drops != nil {
			for l := range out[i].Layers {
				out[i].Layers[l].SwitchDropped = s.drops.dropped(r.hosts.Sub.Addr(), marks[l])
			}
		}
	}
	return out
}

// Summaries are the sessions' per-layer figures as summary.json's sessions[] shows them (the
// metrics package's summary of Stats over the sessions' active times).
func (s *Sessions) Summaries() []metrics.SessionSummary {
	bins := int((s.env.Duration + s.env.Interval - 1) / s.env.Interval)
	rec := &metrics.Recording{Engine: "emu", Config: sim.Config{Duration: s.env.Duration, Interval: s.env.Interval}}
	for i, st := range s.Stats() {
		fs := sim.NewFlowStats(st.Name, "media", "sfu/"+st.Policy, bins, s.env.Interval)
		fs.Start, fs.Stop = s.runs[i].spec.Start, s.runs[i].spec.Stop
		rec.Flows = append(rec.Flows, metrics.RecordedFlow{Stats: fs, Session: st})
	}
	return metrics.Summarize(rec, metrics.Meta{}).Sessions
}

// Forwarding is, per session, the layer (1 = base) its subscriber last got a keyframe of (a Pion
// subscriber) or decoded a frame of (a browser), or with temporal layering the number of
// temporal layers it received over the last second; 0 before the first.
func (s *Sessions) Forwarding() map[string]int {
	out := map[string]int{}
	for _, r := range s.runs {
		out[r.spec.Name] = r.count.current()
	}
	return out
}

// simulcastLayers are the publisher's encodings for a session's layers, highest first: encoding
// k runs at the sum of the first k layer rates, each at its own resolution (which tells the
// layers apart at the subscriber).
func simulcastLayers(rates []float64) []mediasrc.Layer {
	sizes := [][2]int{{320, 180}, {640, 360}, {1280, 720}}
	if len(rates) < 3 {
		sizes = sizes[1-min(1, len(rates)-1):] // 1 layer: 640x360; 2: 320x180, 640x360
	}
	rids := []string{"q", "h", "f"}[3-len(rates):]
	var out []mediasrc.Layer
	sum := 0.0
	for i, r := range rates {
		sum += r
		out = append(out, mediasrc.Layer{RID: rids[i], Width: sizes[i][0], Height: sizes[i][1], Kbps: int(sum/1000 + 0.5)})
	}
	slices.Reverse(out)
	return out
}

func apiURL(a netip.Addr) string {
	return fmt.Sprintf("http://%s/janus", netip.AddrPortFrom(a, apiPort))
}
