package topo

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

const exp1 = `name: exp1
nodes:
  - london
  - {name: paris, enforcer: true, role: sfu}
  - madrid
links:
  - {from: london, to: paris, capacity: 100Mbps, delay: 3ms, duplex: true}
  - {name: pm, from: paris, to: madrid, capacity: 2 Mbit/s, delay: 6ms, duplex: true, interface: eth1, peer_interface: eth0}
`

func mustParse(t *testing.T, src string) *Topology {
	t.Helper()
	top, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func TestParse(t *testing.T) {
	top := mustParse(t, exp1)
	if top.Name() != "exp1" || len(top.Nodes()) != 3 || len(top.Links()) != 4 {
		t.Fatalf("got %q with %d nodes and %d links", top.Name(), len(top.Nodes()), len(top.Links()))
	}
	var names []string
	for _, l := range top.Links() {
		names = append(names, l.Name)
	}
	if want := []string{"london->paris", "paris->london", "pm", "pm-rev"}; !slices.Equal(names, want) {
		t.Errorf("link names %v, want %v", names, want)
	}
	i, _ := top.LinkIndex("pm")
	if l := top.Links()[i]; l.Capacity != 2*cc.Mbps || l.Delay != 6*time.Millisecond || l.From != "paris" {
		t.Errorf("pm = %+v", l)
	}
	// Counters: pm is tx of eth1 on paris and rx of eth0 on madrid; its reverse the other way round.
	rev, _ := top.LinkIndex("pm-rev")
	for _, c := range []struct {
		node, iface, dir string
		want             int
	}{{"paris", "eth1", "tx", i}, {"madrid", "eth0", "rx", i}, {"madrid", "eth0", "tx", rev}, {"paris", "eth1", "rx", rev}} {
		if got, ok := top.CounterLink(c.node, c.iface, c.dir); !ok || got != c.want {
			t.Errorf("CounterLink(%s, %s, %s) = %d, %v; want %d", c.node, c.iface, c.dir, got, ok, c.want)
		}
	}
	if !top.CanEnforce("paris") || top.CanEnforce("london") {
		t.Error("only paris is marked as an enforcer")
	}
}

func TestParseErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"unknown node", "nodes: [a, b]\nlinks:\n  - from: a\n    to: c\n    capacity: 1Mbps\n", `t.yaml:4: links[0].to: unknown node "c"`},
		{"link to nowhere", "nodes: [a, b]\nlinks:\n  - {from: a, capacity: 1Mbps}\n", "t.yaml:3: links[0].to: missing"},
		{"negative capacity", "nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: -1Mbps}\n", `t.yaml:3: links[0].capacity: negative rate "-1Mbps"`},
		{"unit-less capacity", "nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 10}\n", `t.yaml:3: links[0].capacity: rate "10" has no unit`},
		{"unknown unit", "nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 10MB}\n", `links[0].capacity: unknown rate unit "MB"`},
		{"zero capacity", "nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 0bps}\n", "links[0].capacity: capacity must be positive"},
		{"unit-less delay", "nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 1Mbps, delay: 5}\n", `t.yaml:3: links[0].delay: delay "5" has no unit`},
		{"unknown field", "nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 1Mbps, bandwidth: 2Mbps}\n", "t.yaml:3: links[0].bandwidth: unknown field"},
		{"duplicate node", "nodes:\n  - a\n  - a\n", `t.yaml:3: nodes[1].name: node "a" defined twice`},
		{"duplicate link", "nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 1Mbps}\n  - {from: a, to: b, capacity: 2Mbps}\n", `t.yaml:4: links[1].name: link "a->b" already defined at line 3`},
		{"self loop", "nodes: [a]\nlinks:\n  - {from: a, to: a, capacity: 1Mbps}\n", `t.yaml:3: links[0]: link from "a" to itself`},
		{"no nodes", "name: x\n", "nodes: the topology needs at least one node"},
		{"bad node name", "nodes: ['a b']\n", `t.yaml:1: nodes[0].name: name "a b"`},
		{"link not a mapping", "nodes: [a]\nlinks: [3]\n", "t.yaml:2: links[0]: expected a mapping"},
		{"bad yaml", "nodes: [a\n", "t.yaml: "},
		{"empty", "", "t.yaml:0: (top level): empty topology file"},
		{"bad bool", "nodes:\n  - {name: a, enforcer: maybe}\n", `t.yaml:2: nodes[0].enforcer: "maybe" is not true or false`},
		{"interface measured twice", "nodes: [a, b, c]\nlinks:\n  - {from: a, to: b, capacity: 1Mbps, interface: e0}\n  - {from: a, to: c, capacity: 1Mbps, interface: e0}\n", "tx counters of e0 on a already measure link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(c.src))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("error is a %T, want *Error", err)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, err := Parse("t.yaml", []byte("nodes: [a]\nlinks:\n  - {from: a, to: x, capacity: 1}\n  - {from: y, to: a, capacity: 1Mbps}\n"))
	var te *Error
	if !errors.As(err, &te) || len(te.Problems) != 3 {
		t.Fatalf("want 3 problems (unknown to, unit-less capacity, unknown from), got %v", err)
	}
}

func TestShortestPath(t *testing.T) {
	// a→b→d is two hops with 20 ms, a→c→d two hops with 2 ms, a→d one hop with 50 ms.
	top := mustParse(t, `nodes: [a, b, c, d, e]
links:
  - {from: a, to: b, capacity: 1Gbps, delay: 10ms}
  - {from: b, to: d, capacity: 1Gbps, delay: 10ms}
  - {from: a, to: c, capacity: 1Gbps, delay: 1ms}
  - {from: c, to: d, capacity: 1Gbps, delay: 1ms}
  - {from: a, to: d, capacity: 1Mbps, delay: 50ms}
  - {from: d, to: e, capacity: 1Mbps}
`)
	p, err := top.ShortestPath("a", "d")
	if err != nil || !slices.Equal(top.Names(p), []string{"a->d"}) {
		t.Fatalf("a→d: %v %v, want the direct link (fewest hops)", top.Names(p), err)
	}
	p, _ = top.ShortestPath("a", "e")
	if !slices.Equal(top.Names(p), []string{"a->d", "d->e"}) {
		t.Fatalf("a→e: %v", top.Names(p))
	}
	top = mustParse(t, `nodes: [a, b, c, d]
links:
  - {from: a, to: b, capacity: 1Gbps, delay: 10ms}
  - {from: b, to: d, capacity: 1Gbps, delay: 10ms}
  - {from: a, to: c, capacity: 1Gbps, delay: 1ms}
  - {from: c, to: d, capacity: 1Gbps, delay: 1ms}
`)
	p, _ = top.ShortestPath("a", "d")
	if !slices.Equal(top.Names(p), []string{"a->c", "c->d"}) {
		t.Fatalf("a→d among equal hop counts: %v, want the lower delay via c", top.Names(p))
	}
	if _, err := top.ShortestPath("d", "a"); err == nil || !strings.Contains(err.Error(), "no path") {
		t.Errorf("links are one-way: d→a should have no path, got %v", err)
	}
	if _, err := top.ShortestPath("a", "zz"); err == nil || !strings.Contains(err.Error(), `unknown node "zz"`) {
		t.Errorf("unknown node: %v", err)
	}
	if p, err := top.ShortestPath("a", "a"); err != nil || len(p) != 0 {
		t.Errorf("a→a: %v %v, want an empty path", p, err)
	}
}

func TestResolvePath(t *testing.T) {
	top := mustParse(t, exp1)
	p, end, err := top.ResolvePath("london", "madrid", []string{"london->paris", "pm"})
	if err != nil || end != "madrid" || len(p) != 2 {
		t.Fatalf("%v %q %v", p, end, err)
	}
	if _, end, err := top.ResolvePath("paris", "", []string{"pm"}); err != nil || end != "madrid" {
		t.Fatalf("without a receiver the path's end is the receiver: %q %v", end, err)
	}
	bad := []struct {
		from, to string
		path     []string
		want     string
	}{
		{"london", "madrid", []string{"london->paris", "nope"}, `path[1]: unknown link "nope"`},
		{"london", "madrid", []string{"pm"}, `path[0]: link "pm" starts at "paris", but the path is at "london"`},
		{"london", "madrid", []string{"london->paris"}, `path ends at "paris", not at the receiver "madrid"`},
		{"paris", "", []string{"pm", "pm-rev", "pm"}, "used twice"},
		{"paris", "", nil, "empty path"},
		{"atlantis", "", []string{"pm"}, `unknown node "atlantis"`},
	}
	for _, b := range bad {
		if _, _, err := top.ResolvePath(b.from, b.to, b.path); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%v: error %v, want %q", b.path, err, b.want)
		}
	}
}

func TestEnforcementPoint(t *testing.T) {
	top := mustParse(t, exp1)
	p, _ := top.ShortestPath("london", "madrid")
	if node, li, ok := top.EnforcementPoint(p); !ok || node != "paris" || top.Links()[li].Name != "pm" {
		t.Fatalf("got %s %d %v, want paris on pm (the first marked node on the path)", node, li, ok)
	}
	unmarked := mustParse(t, "nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 1Mbps}\n")
	p, _ = unmarked.ShortestPath("a", "b")
	if node, _, ok := unmarked.EnforcementPoint(p); !ok || node != "a" {
		t.Fatalf("with no node marked every node enforces: got %s %v", node, ok)
	}
	p, _ = top.ShortestPath("madrid", "london")
	if node, _, ok := top.EnforcementPoint(p); !ok || node != "paris" {
		t.Fatalf("madrid→london passes paris: got %s %v", node, ok)
	}
}

func TestParseRate(t *testing.T) {
	good := map[string]cc.Bitrate{"10Mbps": 10 * cc.Mbps, "1.5 Mbit/s": 1500 * cc.Kbps, "600kbps": 600 * cc.Kbps, "1e3bps": 1000, "1Gbps": 1000 * cc.Mbps}
	for s, want := range good {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "10", "Mbps", "-1Mbps", "10 furlongs", "NaNMbps", "1e400Mbps", "2000Gbps"} {
		if _, err := ParseRate(s); err == nil {
			t.Errorf("ParseRate(%q) accepted", s)
		}
	}
}

func TestScenarioTopologiesLoad(t *testing.T) {
	files, _ := filepath.Glob("../../../configs/netctl/*.yaml")
	if len(files) < 3 {
		t.Fatalf("found %d topology files in configs/netctl", len(files))
	}
	for _, f := range files {
		top, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if top.Name() == "" {
			t.Errorf("%s has no name", f)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(exp1))
	files, _ := filepath.Glob("../../../configs/netctl/*.yaml")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 1Mbps, duplex: true}\n"))
	f.Add([]byte("nodes: &n [a]\nlinks: *n\n"))
	f.Add([]byte("nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 1e3kbps, delay: 1h}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		top, err := Parse("f.yaml", data)
		if err != nil {
			if top != nil {
				t.Fatal("topology returned with an error")
			}
			return
		}
		nodes := top.Nodes()
		for _, l := range top.Links() {
			if !top.HasNode(l.From) || !top.HasNode(l.To) || l.Capacity <= 0 || l.Delay < 0 {
				t.Fatalf("accepted a bad link %+v", l)
			}
		}
		p, err := top.ShortestPath(nodes[0].Name, nodes[len(nodes)-1].Name)
		if err == nil && len(p) > 0 {
			if _, _, err := top.ResolvePath(nodes[0].Name, nodes[len(nodes)-1].Name, top.Names(p)); err != nil {
				t.Fatalf("a computed path does not resolve: %v", err)
			}
		}
	})
}
