package switchctl

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/netip"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/ovs"
)

// Cookies: strata's flows carry 0x5354 ("ST") in the cookie's top 16 bits and a hash of their
// priority and match in the low 48, so that a flow keeps its cookie (and its counters) from one
// rule set to the next while it does not change. The enforcer replaces and checks only flows under
// this tag, so that other flows on the same switch (a meter policy at priorities 1-99) are left
// alone.
const (
	cookieTag  = uint64(0x5354) << 48
	cookieMask = uint64(0xffff) << 48
	maxFlows   = 0xffff
)

// Priorities: the base flow forwards everything else as a learning switch; the rules' flows
// (exact 5-tuple and DSCP) sit above it.
const (
	basePriority = 0
	rulePriority = 100
)

// flowSpec is one flow the enforcer installs.
type flowSpec struct {
	cookie   uint64
	priority int
	match    string            // ovs-ofctl syntax
	fields   map[string]string // the match normalized, to compare with a dump
	drop     bool
	meter    uint32 // police through this meter, then NORMAL (0: none)
	sub      string // "" for the base flow and meter flows
	dscp     int
}

func (f *flowSpec) actions() string {
	switch {
	case f.drop:
		return "drop"
	case f.meter > 0:
		return "meter:" + strconv.FormatUint(uint64(f.meter), 10) + ",NORMAL"
	}
	return "NORMAL"
}

// spec is the flow in ovs-ofctl's syntax.
func (f *flowSpec) spec() string {
	s := fmt.Sprintf("cookie=%#x,priority=%d,", f.cookie, f.priority)
	if f.match != "" {
		s += f.match + ","
	}
	return s + "actions=" + f.actions()
}

// table is a rule set translated into flows.
type table struct {
	version       uint64
	flows         []flowSpec
	installed     []api.Rule // the rules the flows enforce
	unenforceable []string   // subscriptions whose rules cannot be enforced
	meters        []meterSpec
	unplaced      []string // links whose meter has no interface
}

// translate turns a node's rules into flows: the base flow (priority 0, NORMAL), then for each
// enforceable rule one flow per passed mark (NORMAL, there for its counters) and one per dropped
// mark (drop), matching the rule's UDP 5-tuple and the mark. A rule is enforceable when it has a
// flow and every layer of its stream has a mark; a rule whose flow and mark another rule already
// uses is not (one packet cannot be passed and dropped).
func translate(rules []api.Rule, meters []api.Meter, version uint64) (*table, error) {
	t := &table{version: version}
	t.add(flowSpec{priority: basePriority, fields: map[string]string{}})
	seen := map[string]bool{}
	for _, r := range rules {
		specs, ok := ruleFlows(r)
		for _, f := range specs {
			if _, dup := seen[f.match]; dup {
				ok = false
			}
		}
		if !ok {
			t.unenforceable = append(t.unenforceable, r.Subscription)
			continue
		}
		for _, f := range specs {
			seen[f.match] = true
			t.add(f)
		}
		t.installed = append(t.installed, r)
	}
	t.addMeters(meters)
	if len(t.flows) > maxFlows {
		return nil, fmt.Errorf("switchctl: %d flows exceed the %d a rule set may have", len(t.flows), maxFlows)
	}
	return t, nil
}

// install replaces strata's flows on a switch with the table's, in one atomic bundle.
func (t *table) install(ctx context.Context, c *ovs.Client) error {
	specs := make([]string, len(t.flows))
	for i := range t.flows {
		specs[i] = t.flows[i].spec()
	}
	return c.ReplaceCookie(ctx, cookieTag, cookieMask, specs)
}

func (t *table) add(f flowSpec) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d,%s", f.priority, f.match)
	f.cookie = cookieTag | h.Sum64()&^cookieMask
	t.flows = append(t.flows, f)
}

// key identifies a flow on the switch (OpenFlow's strict match: priority and match).
func (f *flowSpec) key() string { return strconv.Itoa(f.priority) + "," + f.match }

// strict is the flow's priority and match, as delete_strict takes them.
func (f *flowSpec) strict() string {
	if f.match == "" {
		return "priority=" + strconv.Itoa(f.priority)
	}
	return "priority=" + strconv.Itoa(f.priority) + "," + f.match
}

// changes are the bundle operations that turn old (on the switch) into t: flows that are gone are
// deleted, new or changed ones added (an add replaces a flow with the same priority and match),
// unchanged ones left alone, so that they keep their counters.
func (t *table) changes(old *table) []string {
	next := make(map[string]*flowSpec, len(t.flows))
	for i := range t.flows {
		next[t.flows[i].key()] = &t.flows[i]
	}
	var ops []string
	prev := make(map[string]bool, len(old.flows))
	for i := range old.flows {
		o := &old.flows[i]
		prev[o.key()] = true
		if n, ok := next[o.key()]; !ok {
			ops = append(ops, "delete_strict "+o.strict())
		} else if n.actions() != o.actions() || n.cookie != o.cookie {
			// reset_counts: a replaced flow's counters would otherwise carry over (OpenFlow copies
			// them), and a layer's flow turned from pass to drop would show what it passed as dropped.
			ops = append(ops, "add "+strings.Replace(n.spec(), ",actions=", ",reset_counts,actions=", 1))
		}
	}
	for i := range t.flows {
		if !prev[t.flows[i].key()] {
			ops = append(ops, "add "+t.flows[i].spec())
		}
	}
	return ops
}

// ruleFlows returns a rule's flows, and false when the rule cannot be enforced.
func ruleFlows(r api.Rule) ([]flowSpec, bool) {
	if r.Flow == nil || r.Flow.Proto != "udp" || len(r.PassDSCP)+len(r.DropDSCP) != r.Layers || r.Layers == 0 {
		return nil, false
	}
	src, err1 := netip.ParseAddrPort(r.Flow.Src)
	dst, err2 := netip.ParseAddrPort(r.Flow.Dst)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	sa, da := src.Addr().Unmap(), dst.Addr().Unmap()
	if sa.Is4() != da.Is4() || sa.Zone() != "" || da.Zone() != "" {
		return nil, false
	}
	proto, s, d := "udp", "nw_src", "nw_dst"
	if !sa.Is4() {
		proto, s, d = "udp6", "ipv6_src", "ipv6_dst"
	}
	var out []flowSpec
	for i, dscp := range append(append([]int{}, r.PassDSCP...), r.DropDSCP...) {
		if dscp < 1 || dscp > api.MaxDSCP {
			return nil, false
		}
		f := flowSpec{
			priority: rulePriority, drop: i >= len(r.PassDSCP), sub: r.Subscription, dscp: dscp,
			match: fmt.Sprintf("%s,%s=%s,tp_src=%d,%s=%s,tp_dst=%d,ip_dscp=%d", proto, s, sa, src.Port(), d, da, dst.Port(), dscp),
		}
		f.fields = matchFields(f.match)
		out = append(out, f)
	}
	return out, true
}

// matchFields normalizes a match, as given or as dump-flows prints it, for comparison: fields as
// a set, addresses in canonical form, ip_dscp=N as OVS prints it (nw_tos=4N).
func matchFields(m string) map[string]string {
	out := map[string]string{}
	for _, item := range strings.Split(m, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		k, v, _ := strings.Cut(item, "=")
		if k == "in_port" {
			continue // dumps print the port's number, flows give its name; the cookie covers it
		}
		if a, err := netip.ParseAddr(v); err == nil {
			v = a.Unmap().String()
		}
		if k == "ip_dscp" {
			if n, err := strconv.Atoi(v); err == nil {
				k, v = "nw_tos", strconv.Itoa(n<<2)
			}
		}
		out[k] = v
	}
	return out
}

// matches reports whether a dump holds exactly the table's flows under strata's cookie tag (other
// flows are not the enforcer's business).
func (t *table) matches(dump []ovs.Flow) bool {
	byCookie := make(map[uint64]*ovs.Flow, len(dump))
	n := 0
	for i := range dump {
		if f := &dump[i]; f.Cookie&cookieMask == cookieTag && f.Table == 0 {
			byCookie[f.Cookie] = f
			n++
		}
	}
	if n != len(t.flows) || len(byCookie) != n {
		return false
	}
	for i := range t.flows {
		w := &t.flows[i]
		got, ok := byCookie[w.cookie]
		if !ok || got.Priority != w.priority || !strings.EqualFold(got.Actions, w.actions()) || !sameFields(matchFields(got.Match), w.fields) {
			return false
		}
	}
	return true
}

func sameFields(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// counters returns the rules' flows with the dump's counters (zero for flows not in it).
func (t *table) counters(dump []ovs.Flow) []api.SwitchFlow {
	byCookie := make(map[uint64]*ovs.Flow, len(dump))
	for i := range dump {
		byCookie[dump[i].Cookie] = &dump[i]
	}
	out := make([]api.SwitchFlow, 0, len(t.flows))
	for i := range t.flows {
		f := &t.flows[i]
		if f.sub == "" {
			continue
		}
		sf := api.SwitchFlow{Subscription: f.sub, DSCP: f.dscp, Action: "pass"}
		if f.drop {
			sf.Action = "drop"
		}
		if d, ok := byCookie[f.cookie]; ok {
			sf.Packets, sf.Bytes = d.Packets, d.Bytes
		}
		out = append(out, sf)
	}
	return out
}
