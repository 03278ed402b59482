//go:build linux

package videoroom_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/api"
)

// ackSwitch stands in for a switch's enforcer (switchctl with Open vSwitch, tested against a real
// switch in its own package): it tells the controller it installed every rule a switch could
// match (those with a flow and marks) while up, and that it holds nothing while down. It drops
// no packet itself: the test sees what the SFU sends.
type ackSwitch struct {
	ctl  atomic.Pointer[netctl.Controller]
	up   atomic.Bool
	work chan struct{}

	mu   sync.Mutex
	last map[string][]api.Rule
}

func newAckSwitch() *ackSwitch {
	s := &ackSwitch{work: make(chan struct{}, 1), last: map[string][]api.Rule{}}
	s.up.Store(true)
	return s
}

// ApplyRules implements netctl.Enforcer: the acknowledgement comes from the switch's own goroutine.
func (s *ackSwitch) ApplyRules(node string, rules []api.Rule) {
	s.mu.Lock()
	s.last[node] = slices.Clone(rules)
	s.mu.Unlock()
	s.kick()
}

func (s *ackSwitch) kick() {
	select {
	case s.work <- struct{}{}:
	default:
	}
}

func (s *ackSwitch) setUp(up bool) {
	s.up.Store(up)
	s.kick()
}

// run acknowledges rule sets until ctx ends.
func (s *ackSwitch) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.work:
		}
		ctl := s.ctl.Load()
		s.mu.Lock()
		last := map[string][]api.Rule{}
		for node, rules := range s.last {
			last[node] = slices.Clone(rules)
		}
		s.mu.Unlock()
		for node, rules := range last {
			if !s.up.Load() {
				ctl.SetEnforced(node, nil, errors.New("switch down"))
				continue
			}
			var installed []api.Rule
			for _, r := range rules {
				if r.Flow != nil && len(r.PassDSCP)+len(r.DropDSCP) > 0 {
					installed = append(installed, r)
				}
			}
			ctl.SetEnforced(node, installed, nil)
		}
	}
}

// switchMarks has a mark per rung of the test publisher's ladder (three simulcast encodings of
// three temporal layers each): AF11 to AF33.
var switchMarks = []int{10, 12, 14, 18, 20, 22, 26, 28, 30}

// TestSwitchEnforcement is the SFU side of issue 18 end to end: with enforcement: switch the
// videoroom registers the stream's rungs with their marks and the subscription with its flow (the
// selected ICE pair), every packet leaves with its rung's DSCP (read on the subscriber's socket),
// and the subscriber's down-track forwards every temporal layer of its encoding while the switch
// enforces the decision, and thins to the decision when it no longer does.
func TestSwitchEnforcement(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	sw := newAckSwitch()
	tc, _ := startController(t, nil, netctl.WithEnforcer(sw))
	sw.ctl.Store(tc.ctl)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go sw.run(ctx)
	muxPort := freeUDPPort(t)
	c := startServer(t, func(cfg *config.Config) {
		withNetCtl(tc.url)(cfg)
		n := &cfg.Plugins.VideoRoom.NetCtl
		n.Enforcement, n.Marks = config.EnforceSwitch, config.NetCtlMarks{Audio: 46, Layers: switchMarks}
		cfg.Media.ICE.UDPMuxPort, cfg.Media.ICE.BatchWrites = muxPort, true
	})
	admin := attach(t, c)
	const room = 4345
	mustRequest(t, admin, map[string]any{"request": "create", "room": room, "layer_policy": "network"}, nil)
	pub := startPublisher(t, c, room, "camera")
	waitActive(t, admin, room, pub.id)
	wire, err := newClassNet()
	if err != nil {
		t.Fatal(err)
	}
	sub := subscribeWith(t, c, room, pub.id, nil, clientOptions{net: wire})
	if d := sub.waitFrame(time.Now(), 10*time.Second, func(l int) bool { return l == 2 }); d < 0 {
		t.Fatalf("subscriber never reached the top layer (now %d)", sub.layerNow())
	}

	// Registration: the rungs carry the configured marks, the subscription its flow.
	waitFor(t, 5*time.Second, "the stream's marks and the subscription's flow", func() bool {
		streams, subs := tc.ctl.Streams(), tc.ctl.Subscriptions()
		return len(streams) == 1 && len(subs) == 1 && subs[0].Flow != nil && marked(streams[0].Layers)
	})
	flow := tc.ctl.Subscriptions()[0].Flow
	pair, err := sub.pc.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
	if err != nil || pair == nil {
		t.Fatalf("subscriber's selected pair: %v", err)
	}
	want := api.Flow{Proto: "udp", Src: fmt.Sprintf("127.0.0.1:%d", muxPort), Dst: fmt.Sprintf("%s:%d", pair.Local.Address, pair.Local.Port)}
	if *flow != want {
		t.Fatalf("registered flow %+v, want %+v (the selected ICE pair)", *flow, want)
	}
	id := tc.ctl.Subscriptions()[0].ID
	waitFor(t, 5*time.Second, "the decision to be enforced", func() bool { d, _ := tc.ctl.Decision(id); return d.Enforced })

	// Every packet carries its rung's mark on the wire.
	wireWindow(t, sub, wire, tc, 2, "top encoding, all rungs passed", func(n [3]int) bool { return n[0] > 0 && n[1] > 0 && n[2] > 0 })

	// The link cut to the base rung: the switch enforces, so the SFU forwards every temporal
	// layer of the base encoding, the ones the switch drops marked with their own rung's DSCP.
	if _, err := tc.cli.SetLinkCapacity(ctx, "sfu-viewer", cc.Bitrate(20_000)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "an enforced decision of one rung", func() bool {
		d, _ := tc.ctl.Decision(id)
		return d.Layers == 1 && d.Enforced
	})
	wireWindow(t, sub, wire, tc, 0, "base encoding, enforced at the switch: every temporal layer forwarded", func(n [3]int) bool { return n[0] > 0 && n[1] > 0 && n[2] > 0 })

	// The switch goes away: the decision is no longer enforced and the SFU thins it itself.
	sw.setUp(false)
	waitFor(t, 5*time.Second, "the decision to be no longer enforced", func() bool {
		d, _ := tc.ctl.Decision(id)
		return d.Layers == 1 && !d.Enforced
	})
	wireWindow(t, sub, wire, tc, 0, "base encoding, not enforced: the SFU thins to the base rung", func(n [3]int) bool { return n[0] > 0 && n[1]+n[2] == 0 })
}

// marked says every rung has a mark of switchMarks, in order.
func marked(layers []api.Layer) bool {
	for i, l := range layers {
		if i >= len(switchMarks) || l.DSCP != switchMarks[i] {
			return false
		}
	}
	return len(layers) > 0
}

// rungMark is the mark of a packet of encoding s and temporal layer tid: its encoding's first rung
// that includes the temporal layer.
func rungMark(layers []api.Layer, s, tid int) int {
	for _, l := range layers {
		var ls, lt int
		if _, err := fmt.Sscanf(l.Name, "s%dt%d", &ls, &lt); err == nil && ls == s && lt >= tid {
			return l.DSCP
		}
	}
	return -1
}

// wireWindow watches the frames the subscriber receives for a while: they must all be of
// encoding layer, carry on the wire the mark of their rung as registered, and have temporal layer
// counts tids accepts. A window during which the registered rungs changed (their rates moved
// enough for the ladder to change) is watched again.
func wireWindow(t *testing.T, sub *testSubscriber, wire *classNet, tc *testController, layer int, what string, tids func([3]int) bool) {
	t.Helper()
	ssrc := uint32(sub.pc.GetReceivers()[0].Track().SSRC())
	var last string
	for range 5 {
		before := tc.ctl.Streams()[0].Layers
		from := time.Now().Add(300 * time.Millisecond) // what was already on its way
		time.Sleep(1500 * time.Millisecond)
		ladder := tc.ctl.Streams()[0].Layers
		if !sameRungs(before, ladder) {
			last = "the registered rungs changed during the window"
			continue
		}
		var n [3]int
		bad, other := 0, 0
		sub.mu.Lock()
		for _, f := range sub.frames {
			if f.at.Before(from) || !f.live {
				continue
			}
			if f.layer != layer {
				other++
				continue
			}
			n[f.tid]++
			got, ok := wire.dscp(ssrc, uint16(f.seq))
			if want := rungMark(ladder, f.layer, int(f.tid)); !ok || got != want {
				bad++
				last = fmt.Sprintf("frame of s%dt%d (seq %d) arrived with DSCP %d (%v), want %d", f.layer, f.tid, f.seq, got, ok, want)
			}
		}
		sub.mu.Unlock()
		if bad == 0 && other == 0 && tids(n) {
			t.Logf("%s: frames per temporal layer %v, each with its rung's mark", what, n)
			return
		}
		last = fmt.Sprintf("%d frames per temporal layer, %d of another encoding, %d mismarked; %s", n, other, bad, last)
	}
	t.Fatalf("%s: %s", what, last)
}

func sameRungs(a, b []api.Layer) bool {
	return slices.EqualFunc(a, b, func(x, y api.Layer) bool { return x.Name == y.Name && x.DSCP == y.DSCP })
}

func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}
