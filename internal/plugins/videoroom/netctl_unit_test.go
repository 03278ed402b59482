package videoroom

import (
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

func TestLadderLayersAreRungIncrements(t *testing.T) {
	var r policy.Rates
	r[0] = [3]cc.Bitrate{100, 150, 150} // s0t2 costs no more than s0t1: not a rung
	r[1] = [3]cc.Bitrate{300, 0, 400}   // s1t1 not measured
	r[2][0] = 350                       // cheaper than s1t2: not a rung
	got, ladder := ladderLayers(r)
	if len(ladder) != 4 || ladder[2] != (policy.Layer{Spatial: 1}) || ladder[3] != (policy.Layer{Spatial: 1, Temporal: 2}) {
		t.Errorf("rung layers %v", ladder)
	}
	want := []api.Layer{{RateBps: 100, Name: "s0t0"}, {RateBps: 50, Name: "s0t1"}, {RateBps: 150, Name: "s1t0"}, {RateBps: 100, Name: "s1t2"}}
	if len(got) != len(want) {
		t.Fatalf("ladder %+v, want %+v", got, want)
	}
	var sum int64
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rung %d = %+v, want %+v", i, got[i], want[i])
		}
		sum += got[i].RateBps
	}
	if sum != 400 {
		t.Errorf("rungs sum to %d, want the top rung's cost 400", sum)
	}
	if l, _ := ladderLayers(policy.Rates{}); l != nil {
		t.Error("an unmeasured stream has rungs")
	}
}

func TestLayersChangedIgnoresJitter(t *testing.T) {
	base := []api.Layer{{RateBps: 1000, Name: "s0t0"}, {RateBps: 2000, Name: "s1t0"}}
	cases := []struct {
		name string
		cur  []api.Layer
		want bool
	}{
		{"same", []api.Layer{{RateBps: 1000, Name: "s0t0"}, {RateBps: 2000, Name: "s1t0"}}, false},
		{"5% off", []api.Layer{{RateBps: 1050, Name: "s0t0"}, {RateBps: 1900, Name: "s1t0"}}, false},
		{"20% off", []api.Layer{{RateBps: 1000, Name: "s0t0"}, {RateBps: 2400, Name: "s1t0"}}, true},
		{"rung added", append(append([]api.Layer(nil), base...), api.Layer{RateBps: 10, Name: "s2t0"}), true},
		{"other rung", []api.Layer{{RateBps: 1000, Name: "s0t0"}, {RateBps: 2000, Name: "s1t1"}}, true},
	}
	for _, c := range cases {
		if got := layersChanged(base, c.cur); got != c.want {
			t.Errorf("%s: changed = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestReceiverOfTakesTheLongestPrefix(t *testing.T) {
	b := &netBridge{cfg: config.VideoRoomNetCtl{Receiver: "default", Receivers: map[string]string{"eu-": "paris", "eu-es-": "madrid"}}}
	for opaque, want := range map[string]string{"eu-es-42": "madrid", "eu-fr-1": "paris", "us-1": "default", "": "default"} {
		if got := b.receiverOf(opaque); got != want {
			t.Errorf("receiverOf(%q) = %q, want %q", opaque, got, want)
		}
	}
}

func TestLayerPolicyOption(t *testing.T) {
	cfg := config.Default().Plugins.VideoRoom
	cfg.Allocation.Policy = "probe"
	cfg.Rooms = []config.VideoRoomRoom{{ID: 1, Policy: "hybrid"}, {ID: 2}}
	p := New(cfg, record.SessionOptions{}, nil)
	defer p.Destroy()
	r1, _ := p.room(1)
	r2, _ := p.room(2)
	if got := p.roomAllocator(r1).Policy; got != "hybrid" {
		t.Errorf("room 1 policy %q, want its own hybrid", got)
	}
	if got := p.roomAllocator(r2).Policy; got != "probe" {
		t.Errorf("room 2 policy %q, want the configured default probe", got)
	}
	for in, ok := range map[string]bool{`{"layer_policy":"network"}`: true, `{"layer_policy":"fast"}`: false, `{"layer_policy":3}`: false, `{}`: true} {
		var b body
		if err := json.Unmarshal([]byte(in), &b); err != nil {
			t.Fatal(err)
		}
		if _, _, err := layerPolicy(b); (err == nil) != ok {
			t.Errorf("%s: error %v, want ok=%v", in, err, ok)
		} else if err != nil && err.code != ErrInvalidElement {
			t.Errorf("%s: code %d, want %d", in, err.code, ErrInvalidElement)
		}
	}
	if data, err := p.edit(body{"room": json.RawMessage("2"), "layer_policy": json.RawMessage(`"network"`)}); err != nil {
		t.Fatalf("edit: %v", err.reason)
	} else if data[short] != "edited" || p.roomAllocator(r2).Policy != "network" {
		t.Errorf("edit: %v, policy %q, want network", data, p.roomAllocator(r2).Policy)
	}
}

func TestUnreachableControllerCountsOneFallback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	_ = ln.Close()
	cfg := config.Default().Plugins.VideoRoom
	cfg.Rooms = nil
	cfg.NetCtl = config.VideoRoomNetCtl{URL: url, Node: "sfu", Receiver: "viewer", Interval: 50 * time.Millisecond}
	p := New(cfg, record.SessionOptions{}, nil)
	defer p.Destroy()
	deadline := time.Now().Add(5 * time.Second)
	for p.NetCtlFallbacks() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(600 * time.Millisecond) // several failed reconnections and reconciliations
	if n := p.NetCtlFallbacks(); n != 1 {
		t.Errorf("%d fallbacks counted for one outage, want 1", n)
	}
	if New(config.VideoRoom{}, record.SessionOptions{}, nil).NetCtlFallbacks() != 0 {
		t.Error("fallbacks counted without a controller")
	}
}

func TestConfigChecksLayerPoliciesAndNetCtl(t *testing.T) {
	good := "plugins:\n  videoroom:\n    rooms: [{id: 7, policy: network}]\n    netctl: {url: \"http://127.0.0.1:9\", node: paris, receivers: {\"es-\": madrid}}\n"
	c, err := config.Parse([]byte(good), "good.yaml")
	if err != nil {
		t.Fatalf("good file rejected: %v", err)
	}
	if n := c.Plugins.VideoRoom.NetCtl; n.Node != "paris" || n.Receivers["es-"] != "madrid" || n.Interval != time.Second || n.Receiver != "receiver" {
		t.Errorf("netctl section %+v: the file's values over the reference defaults expected", n)
	}
	for name, bad := range map[string]string{
		"room policy":  "plugins:\n  videoroom:\n    rooms: [{id: 7, policy: fastest}]\n",
		"alloc policy": "plugins:\n  videoroom:\n    allocation: {policy: fastest}\n",
		"no node":      "plugins:\n  videoroom:\n    netctl: {url: \"http://127.0.0.1:9\", node: \"\"}\n",
	} {
		if _, err := config.Parse([]byte(bad), name+".yaml"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestMarkLayers: in switch mode a stream's rungs get the configured marks when a switch can
// enforce them, none otherwise; in sfu mode none.
func TestMarkLayers(t *testing.T) {
	recv := sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecVP8}, nil)
	var r policy.Rates
	r[0] = [3]cc.Bitrate{600_000, 1_200_000, 2_400_000}
	sw := &netBridge{cfg: config.VideoRoomNetCtl{Enforcement: config.EnforceSwitch}}
	sw.initMarks()
	layers, ladder := ladderLayers(r)
	marks := sw.markLayers(recv, layers, ladder)
	if layers[0].DSCP != 34 || layers[1].DSCP != 36 || layers[2].DSCP != 38 || marks[0] != [3]uint8{34, 36, 38} {
		t.Fatalf("switch mode, three temporal rungs: layers %+v, marks %v", layers, marks)
	}
	if sw.cfg.Marks.Audio != 46 {
		t.Errorf("default audio mark %d, want 46", sw.cfg.Marks.Audio)
	}
	r[1] = [3]cc.Bitrate{3_000_000, 0, 0} // a fourth rung: more than the three marks
	layers, ladder = ladderLayers(r)
	if marks := sw.markLayers(recv, layers, ladder); marks != (sfu.LayerMarks{}) || layers[0].DSCP != 0 {
		t.Errorf("four rungs, three marks: layers %+v, marks %v; want unmarked", layers, marks)
	}
	sfuMode := &netBridge{cfg: config.VideoRoomNetCtl{}}
	sfuMode.initMarks()
	layers, ladder = ladderLayers(policy.Rates{{600_000, 1_200_000}})
	if marks := sfuMode.markLayers(recv, layers, ladder); marks != (sfu.LayerMarks{}) || layers[0].DSCP != 0 {
		t.Errorf("sfu mode: layers %+v, marks %v; want unmarked", layers, marks)
	}
	if sfuMode.flowOf(nil) != nil || sw.flowOf(nil) != nil {
		t.Error("a flow without a peer")
	}
}
