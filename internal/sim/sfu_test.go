package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// seed000Run builds seed 000's testbed in the simulator: sessions senders (London, Amsterdam,
// Hamburg in turn) with 100 Mbit/s links to the SFU in Paris, a bottleneck Paris→Madrid of
// bottleneck bit/s with 6 ms delay and a 100-packet drop-tail queue, each session offering its
// first layers of base 0.6, spatial 0.6 and temporal 1.2 Mbit/s with RFC 8593 frame statistics and
// a keyframe every 3 s (scene changes); session i starts at 0.7 i s, so that their keyframes do not coincide. With tcp set, a bulk TCP flow shares the bottleneck. The
// controller and the switch are only present for the policies that use them, as in the paper
// (the original bridge ran without the SDN controller).
func seed000Run(t testing.TB, pol string, sessions, layers int, bottleneck float64, tcp bool, d time.Duration) *SFU {
	t.Helper()
	s, u := seed000Build(t, pol, sessions, layers, bottleneck, tcp, d)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return u
}

func seed000Build(t testing.TB, pol string, sessions, layers int, bottleneck float64, tcp bool, d time.Duration) (*Sim, *SFU) {
	t.Helper()
	s := New(Config{Seed: 1, Duration: d})
	link := func(name, from, to string, rate float64, delay time.Duration, queue Limit) *Link {
		l, err := s.AddLink(LinkConfig{Name: name, From: from, To: to, Rate: ConstantRate(rate), Delay: delay, Queue: queue})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	q := Limit{Unit: LimitPackets, Value: 100}
	senders := []string{"london", "amsterdam", "hamburg"}
	up := map[string]*Link{}
	for _, n := range append(senders, "bulk") {
		up[n] = link(n+"-paris", n, "paris", 100e6, 3*time.Millisecond, q)
		link("paris-"+n, "paris", n, 100e6, 3*time.Millisecond, q)
	}
	down := link("paris-madrid", "paris", "madrid", bottleneck, 6*time.Millisecond, q)
	rev := link("madrid-paris", "madrid", "paris", bottleneck, 6*time.Millisecond, q)
	cfg := SFUConfig{Node: "paris", Policy: pol, PolicyConfig: policy.DefaultConfig()}
	if pol == policy.NameNetwork || pol == policy.NameHybrid {
		nc, err := NewNetCtl(s, NetCtlConfig{Enforcers: []string{"paris"}})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Net, cfg.Switch = nc, NewSwitch("paris", nc.Controller().Rules())
	}
	u, err := NewSFU(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	codec := DefaultCodecConfig()
	codec.Model, codec.KeyframeInterval = "statistical", 3*time.Second
	rates := []float64{0.6e6, 0.6e6, 1.2e6}[:layers]
	for i := 0; i < sessions; i++ {
		from := senders[i%len(senders)]
		_, err := u.AddSession(SFUSessionConfig{Name: fmt.Sprintf("s%d", i+1), Layers: rates, Codec: codec,
			Up: []*Link{up[from]}, Down: []*Link{down}, Reverse: []*Link{rev}, Start: time.Duration(i) * 700 * time.Millisecond, Stop: d})
		if err != nil {
			t.Fatal(err)
		}
	}
	if tcp {
		info, ok := LookupController("cubic")
		if !ok {
			t.Fatal("no cubic")
		}
		w, err := info.Build(nil, 1448)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewTCPFlow(s, TCPConfig{Name: "bulk", Kind: "tcp", CC: "cubic", Forward: []*Link{up["bulk"], down},
			Reverse: []*Link{rev, s.Link("paris-bulk")}, Stop: d, Controller: w.Window}); err != nil {
			t.Fatal(err)
		}
	}
	return s, u
}

// totals sums PER (packets lost over sent, all layers) and goodput over an SFU's sessions.
func totals(u *SFU, d time.Duration) (per, goodputBps float64) {
	var sent, recv, good int64
	until := d - 500*time.Millisecond
	for _, sess := range u.Sessions() {
		st := sess.Layers()
		for _, l := range st.Layers {
			last := st.bin(until)
			for b := 0; b < last; b++ {
				sent += int64(l.BinSent[b])
				recv += int64(l.BinRecvOfSent[b])
			}
			good += l.GoodputBytes
		}
	}
	if sent > 0 {
		per = float64(sent-recv) / float64(sent)
	}
	return per, float64(good*8) / d.Seconds()
}

func TestSeed000Experiment1NetworkAvoidsTheOvershoot(t *testing.T) {
	const d = 40 * time.Second
	probe := seed000Run(t, policy.NameProbe, 1, 3, 2e6, false, d)
	network := seed000Run(t, policy.NameNetwork, 1, 3, 2e6, false, d)
	pPER, pGood := totals(probe, d)
	nPER, nGood := totals(network, d)
	t.Logf("probe: PER %.2f%% goodput %.2f Mbit/s; network: PER %.2f%% goodput %.2f Mbit/s", 100*pPER, pGood/1e6, 100*nPER, nGood/1e6)
	if !(nPER < pPER) || pPER < 0.01 {
		t.Errorf("network PER %.3f not below probe's %.3f (or probe did not overshoot)", nPER, pPER)
	}
	if nGood < 0.8*pGood {
		t.Errorf("network goodput %.0f below 80%% of probe's %.0f", nGood, pGood)
	}
	// The controller allows base and spatial (1.2 of 2 Mbit/s), never the temporal layer.
	if fwd := network.Sessions()[0].Layers().Layers[2].Sent; fwd != 0 {
		t.Errorf("network policy forwarded %d packets of layer 3 on a 2 Mbit/s path", fwd)
	}
}

// at runs fn at a simulated time.
type at func()

func (f at) HandleEvent(Event) { f() }

// TestNetworkPolicyFollowsTheControllerInTheSimulator: halving the receiver path's capacity at
// the controller (as an operator would) takes the network policy down to the layers that fit,
// and restoring it brings them back.
func TestNetworkPolicyFollowsTheControllerInTheSimulator(t *testing.T) {
	const d = 30 * time.Second
	s, u := seed000Build(t, policy.NameNetwork, 1, 3, 10e6, false, d)
	ctl := u.Config().Net.Controller()
	s.Schedule(10*time.Second, at(func() { _ = ctl.SetLinkCapacity("paris-madrid", 1e6) }), 0, 0, nil)
	s.Schedule(20*time.Second, at(func() { _ = ctl.SetLinkCapacity("paris-madrid", 0) }), 0, 0, nil)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	fwd := u.Sessions()[0].Layers().BinForwarded // 100 ms bins
	if fwd[90] != 3 || fwd[150] != 1 || fwd[290] != 3 {
		t.Fatalf("layers forwarded at 9 s, 15 s, 29 s: %v %v %v; want 3, 1, 3", fwd[90], fwd[150], fwd[290])
	}
}

// TestSwitchDropsWhatTheRulesForbid: a switch with a rule allowing one layer drops the others
// before the receiver path, whatever the SFU's policy forwards; they count as switch drops, not as
// sent or lost.
func TestSwitchDropsWhatTheRulesForbid(t *testing.T) {
	const d = 12 * time.Second
	s := New(Config{Seed: 1, Duration: d})
	up, _ := s.AddLink(LinkConfig{Name: "up", From: "a", To: "hub", Rate: ConstantRate(100e6)})
	down, _ := s.AddLink(LinkConfig{Name: "down", From: "hub", To: "b", Rate: ConstantRate(10e6), Delay: 6 * time.Millisecond})
	rev, _ := s.AddLink(LinkConfig{Name: "rev", From: "b", To: "hub", Rate: ConstantRate(10e6), Delay: 6 * time.Millisecond})
	rules := netctl.NewRuleTable()
	rules.ApplyRules("hub", []api.Rule{{Node: "hub", Subscription: "s1", Allow: 1, Layers: 3}})
	u, err := NewSFU(s, SFUConfig{Node: "hub", Policy: policy.NameProbe, Switch: NewSwitch("hub", rules)})
	if err != nil {
		t.Fatal(err)
	}
	// The probe policy switches a layer on every 5 s on this clean path.
	sess, err := u.AddSession(SFUSessionConfig{Name: "s1", Layers: []float64{0.6e6, 0.6e6, 1.2e6}, Codec: DefaultCodecConfig(),
		Up: []*Link{up}, Down: []*Link{down}, Reverse: []*Link{rev}, Stop: d})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	ls := sess.Layers().Layers
	if ls[0].Sent == 0 || ls[0].Received != ls[0].Sent {
		t.Errorf("base layer: sent %d received %d", ls[0].Sent, ls[0].Received)
	}
	for i := 1; i < 3; i++ {
		if ls[i].Sent != 0 || ls[i].SwitchDropped == 0 {
			t.Errorf("layer %d: sent %d, dropped by the switch %d", i+1, ls[i].Sent, ls[i].SwitchDropped)
		}
	}
	if _, err := u.AddSession(SFUSessionConfig{Name: "bad", Layers: []float64{1e6}, Up: []*Link{up}, Down: []*Link{rev}, Reverse: []*Link{down}}); err == nil {
		t.Error("a session whose downstream path does not start at the SFU was accepted")
	}
}
