package switchctl

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/ovs"
)

func rule(sub, src, dst string, pass, drop []int) api.Rule {
	return api.Rule{Node: "sfu", Subscription: sub, Allow: len(pass), Layers: len(pass) + len(drop),
		Flow: &api.Flow{Proto: "udp", Src: src, Dst: dst}, PassDSCP: pass, DropDSCP: drop}
}

func TestTranslate(t *testing.T) {
	rules := []api.Rule{
		rule("a", "10.0.0.1:5000", "10.0.0.2:6000", []int{34, 36}, []int{38}),
		rule("b", "[fd00::1]:5000", "[fd00::2]:6000", []int{34}, []int{36, 38}),
		{Subscription: "noflow", Allow: 1, Layers: 3},
		rule("unmarked", "10.0.0.1:5000", "10.0.0.3:6000", []int{34}, nil), // 2 layers, one mark
		rule("dup", "10.0.0.1:5000", "10.0.0.2:6000", []int{34, 36, 38}, nil),
	}
	rules[3].Layers = 2
	tb, err := translate(rules, nil, 7)
	if err != nil {
		t.Fatal(err)
	}
	var specs []string
	cookies := map[uint64]bool{}
	for _, f := range tb.flows {
		spec := f.spec()
		head, rest, _ := strings.Cut(spec, ",")
		if f.cookie&cookieMask != cookieTag || head != fmt.Sprintf("cookie=%#x", f.cookie) || cookies[f.cookie] {
			t.Errorf("flow %s: cookie not tagged or not unique", spec)
		}
		cookies[f.cookie] = true
		specs = append(specs, rest)
	}
	want := []string{
		"priority=0,actions=NORMAL",
		"priority=100,udp,nw_src=10.0.0.1,tp_src=5000,nw_dst=10.0.0.2,tp_dst=6000,ip_dscp=34,actions=NORMAL",
		"priority=100,udp,nw_src=10.0.0.1,tp_src=5000,nw_dst=10.0.0.2,tp_dst=6000,ip_dscp=36,actions=NORMAL",
		"priority=100,udp,nw_src=10.0.0.1,tp_src=5000,nw_dst=10.0.0.2,tp_dst=6000,ip_dscp=38,actions=drop",
		"priority=100,udp6,ipv6_src=fd00::1,tp_src=5000,ipv6_dst=fd00::2,tp_dst=6000,ip_dscp=34,actions=NORMAL",
		"priority=100,udp6,ipv6_src=fd00::1,tp_src=5000,ipv6_dst=fd00::2,tp_dst=6000,ip_dscp=36,actions=drop",
		"priority=100,udp6,ipv6_src=fd00::1,tp_src=5000,ipv6_dst=fd00::2,tp_dst=6000,ip_dscp=38,actions=drop",
	}
	if !slices.Equal(specs, want) {
		t.Errorf("flows:\n%s\nwant\n%s", strings.Join(specs, "\n"), strings.Join(want, "\n"))
	}
	if got := []string{tb.installed[0].Subscription, tb.installed[1].Subscription}; len(tb.installed) != 2 || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("installed %v", tb.installed)
	}
	if !slices.Equal(tb.unenforceable, []string{"noflow", "unmarked", "dup"}) {
		t.Errorf("unenforceable %v", tb.unenforceable)
	}
}

// dumpOf renders a table as ovs-ofctl dump-flows prints it: fields reordered, ip_dscp as nw_tos.
func dumpOf(tb *table) string {
	var b strings.Builder
	b.WriteString("OFPST_FLOW reply (OF1.4) (xid=0x2):\n")
	for _, f := range tb.flows {
		m := ""
		if f.sub != "" {
			fl := f.fields
			proto, s, d := "udp", "nw_src", "nw_dst"
			if _, v6 := fl["ipv6_src"]; v6 {
				proto, s, d = "udp6", "ipv6_src", "ipv6_dst"
			}
			m = fmt.Sprintf(",%s,%s=%s,%s=%s,nw_tos=%s,tp_src=%s,tp_dst=%s", proto, s, fl[s], d, fl[d], fl["nw_tos"], fl["tp_src"], fl["tp_dst"])
		}
		fmt.Fprintf(&b, " cookie=%#x, duration=1.2s, table=0, n_packets=%d, n_bytes=%d, priority=%d%s actions=%s\n", f.cookie, f.dscp, f.dscp*100, f.priority, m, f.actions())
	}
	return b.String()
}

func TestMatches(t *testing.T) {
	tb, err := translate([]api.Rule{rule("a", "10.0.0.1:5000", "10.0.0.2:6000", []int{34}, []int{36, 38}), rule("b", "[fd00::1]:1", "[fd00::2]:2", []int{34}, nil)}, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	dump, err := ovs.ParseFlows(dumpOf(tb))
	if err != nil {
		t.Fatal(err)
	}
	if !tb.matches(dump) {
		t.Fatalf("the table does not match its own dump:\n%s", dumpOf(tb))
	}
	foreign := append(slices.Clone(dump), ovs.Flow{Cookie: 0x77, Priority: 10, Actions: "meter:1,NORMAL"})
	if !tb.matches(foreign) {
		t.Error("a flow of someone else's made the table differ")
	}
	missing := dump[:len(dump)-1]
	changed := slices.Clone(dump)
	changed[3].Actions = "NORMAL"
	retargeted := slices.Clone(dump)
	retargeted[1].Match = strings.Replace(retargeted[1].Match, "tp_dst=6000", "tp_dst=6001", 1)
	extra := append(slices.Clone(dump), ovs.Flow{Cookie: cookieTag | 99, Priority: 100, Actions: "drop"})
	restarted := []ovs.Flow{{Priority: 0, Actions: "NORMAL"}}
	for name, d := range map[string][]ovs.Flow{"missing": missing, "changed": changed, "retargeted": retargeted, "extra": extra, "restarted": restarted} {
		if tb.matches(d) {
			t.Errorf("%s: the table matches a dump that differs", name)
		}
	}
	c := tb.counters(dump)
	if len(c) != 4 || c[0] != (api.SwitchFlow{Subscription: "a", DSCP: 34, Action: "pass", Packets: 34, Bytes: 3400}) || c[2].Action != "drop" {
		t.Errorf("counters %+v", c)
	}
}

// TestChanges: a new rule set touches only the flows that changed.
func TestChanges(t *testing.T) {
	a := rule("a", "10.0.0.1:5000", "10.0.0.2:6000", []int{34, 36}, []int{38})
	b := rule("b", "10.0.0.1:5000", "10.0.0.3:6000", []int{34}, []int{36, 38})
	old, err := translate([]api.Rule{a, b}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	a1 := rule("a", "10.0.0.1:5000", "10.0.0.2:6000", []int{34}, []int{36, 38}) // a loses a layer
	c := rule("c", "10.0.0.1:5000", "10.0.0.4:6000", []int{34, 36, 38}, nil)    // b goes, c comes
	next, err := translate([]api.Rule{a1, c}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	ops := next.changes(old)
	var del, add []string
	for _, op := range ops {
		switch kw, rest, _ := strings.Cut(op, " "); kw {
		case "delete_strict":
			del = append(del, rest)
		case "add":
			add = append(add, rest)
		default:
			t.Errorf("unexpected operation %q", op)
		}
	}
	if len(del) != 3 || !strings.Contains(del[0], "nw_dst=10.0.0.3") {
		t.Errorf("deletes %v: want b's three flows", del)
	}
	if len(add) != 4 || !strings.Contains(add[0], "nw_dst=10.0.0.2") || !strings.Contains(add[0], "ip_dscp=36,reset_counts,actions=drop") {
		t.Errorf("adds %v: want a's DSCP 36 flow (now drop) and c's three", add)
	}
	if ops := next.changes(next); len(ops) != 0 {
		t.Errorf("no change gave %v", ops)
	}
}

func TestTranslateMeters(t *testing.T) {
	tb, err := translate(nil, []api.Meter{
		{Link: "pm", Interface: "w1", RateBps: 1_500_500, BurstBits: 500_000},
		{Link: "nowhere", RateBps: 1_000_000},
		{Link: "ps", Interface: "w2", RateBps: 800_000, BurstBits: 0},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.meters) != 2 || tb.meters[0].Meter != (ovs.Meter{ID: 1, RateKbps: 1501, BurstKb: 500}) || tb.meters[1].Meter != (ovs.Meter{ID: 2, RateKbps: 800}) {
		t.Fatalf("meters %+v", tb.meters)
	}
	if !slices.Equal(tb.unplaced, []string{"nowhere"}) {
		t.Errorf("unplaced %v", tb.unplaced)
	}
	if len(tb.flows) != 3 || !strings.HasSuffix(tb.flows[1].spec(), ",priority=50,in_port=w1,actions=meter:1,NORMAL") {
		t.Fatalf("flows %+v", tb.flows)
	}
	// A dump prints the port's number: the flow still matches (the cookie covers the port).
	dump := []ovs.Flow{
		{Cookie: tb.flows[0].cookie, Priority: 0, Actions: "NORMAL"},
		{Cookie: tb.flows[1].cookie, Priority: 50, Match: "in_port=3", Actions: "meter:1,NORMAL"},
		{Cookie: tb.flows[2].cookie, Priority: 50, Match: "in_port=4", Actions: "meter:2,NORMAL"},
	}
	if !tb.matches(dump) {
		t.Error("the meter flows do not match their dump")
	}
	st := tb.meterStatus([]ovs.MeterStats{{ID: 1, Packets: 10, Bytes: 1000, Bands: []ovs.BandStats{{Packets: 4, Bytes: 400}}}})
	if len(st) != 2 || st[0] != (api.SwitchMeter{Link: "pm", Interface: "w1", ID: 1, RateBps: 1_501_000, BurstBits: 500_000, Packets: 10, Bytes: 1000, DroppedPackets: 4, DroppedBytes: 400}) {
		t.Errorf("status %+v", st)
	}
}
