package emu

import (
	"slices"
	"strings"
	"testing"
)

// Each flow gets its own pair of hosts on its path's end nodes; an SFU run
// gets the SFU's host and per session a publisher → SFU and an SFU →
// subscriber flow, split at the SFU's node.
func TestSpecOf(t *testing.T) {
	s := parseOne(t, `
duration: 10s
links:
  - {name: ab, from: a, to: b, rate: 10Mbps, delay: 5ms, queue: 50pkt, duplex: true}
  - {name: bc, from: b, to: c, rate: 2Mbps, delay: 5ms, queue: 50pkt, duplex: true, switch: ovs}
flows:
  - {name: t, cc: cubic, path: [a, b, c], start_jitter: 1s}
sfu:
  node: b
  policy: probe
  sessions:
    - {name: s1, layers: [0.5Mbps, 1Mbps], path: [a, b, c]}
`)
	spec, err := specOf(s, 7)
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, h := range spec.Hosts {
		hosts = append(hosts, h.Name+"@"+h.Node)
	}
	if got := strings.Join(hosts, " "); got != "t-src@a t-dst@c sfu@b s1-pub@a s1-sub@c" {
		t.Fatalf("hosts: %s", got)
	}
	var flows []string
	for _, f := range spec.Flows {
		flows = append(flows, f.Name+":"+f.Src+">"+f.Dst+":"+strings.Join(f.Path, "")+"/"+strings.Join(f.ReversePath, ""))
	}
	if got := strings.Join(flows, " "); got != "t:t-src>t-dst:abc/cba s1-up:s1-pub>sfu:ab/ba s1:sfu>s1-sub:bc/cb" {
		t.Fatalf("flows: %s", got)
	}
	if got := linkIndices(spec.Links, []string{"c", "b", "a"}); !slices.Equal(got, []int{3, 1}) {
		t.Fatalf("reverse path's links: %v (links %v)", got, spec.Links)
	}
	// switch: ovs applies to the link's own direction, not its reverse.
	if !slices.Equal(spec.Switched, []string{"bc"}) {
		t.Fatalf("switched links %v, want [bc]", spec.Switched)
	}
	if spec.Seed != 7 || spec.Duration != s.Duration || spec.Interval != s.Interval {
		t.Fatalf("spec seed %d duration %v interval %v", spec.Seed, spec.Duration, spec.Interval)
	}

	s.SFU.Node = "c"
	if _, err := specOf(s, 7); err == nil || !strings.Contains(err.Error(), "must pass through the SFU's node c") {
		t.Fatalf("a session ending at the SFU's node: %v", err)
	}
}
