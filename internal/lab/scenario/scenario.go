// Package scenario parses strata lab scenario files (YAML) into runnable
// experiments and builds simulator runs from them.
//
// Every value that has a unit must carry it ("10Mbps", "50ms", "60KB",
// "100pkt", "5%"). Errors name the file, the line and the field, and a file
// with any error yields no runs. A file may sweep one parameter: the sweep
// names a field by its dotted path (list items by their name or index) and
// lists the values to substitute; each value becomes one run.
package scenario

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-rtc/strata/internal/sim"
	"github.com/strata-rtc/strata/internal/yamlfield"
)

// Scenario is one runnable experiment.
type Scenario struct {
	File        string
	Name        string
	Description string
	// Reference is what the paper or RFC reports for this experiment; the
	// report prints it beside the result.
	Reference string
	Duration  time.Duration
	Seed      uint64
	Interval  time.Duration
	Links     []Link
	Flows     []Flow
	// SFU is the scenario's SFU node with its layered sessions (seed 000), if any.
	SFU *SFU
	// SweepParam and SweepValue identify the sweep point this run is.
	SweepParam, SweepValue string
}

// Link is a one-way link with its position in the file.
type Link struct {
	sim.LinkConfig
	// Switch is the switch at the link's source end in emulation: SwitchOVS (Open vSwitch, every
	// packet entering the link passes it first) or "" (none). The simulator models its SFU node's
	// switch through the network controller whatever this says.
	Switch string
	Line   int
}

// SwitchOVS puts Open vSwitch at a link's source end (links[].switch).
const SwitchOVS = "ovs"

// Flow is one traffic flow.
type Flow struct {
	Name        string
	Group       string // the name in the file, before `count` expansion
	Kind        string // media, tcp, ledbat, cbr, browser
	CC          string
	Params      sim.Params
	Path        []string
	ReversePath []string
	Start, Stop time.Duration
	StartJitter time.Duration
	Pauses      []sim.Interval
	Codec       sim.CodecConfig
	PacketSize  int
	Feedback    time.Duration
	ECN         bool
	Rate        float64 // cbr
	MSS         int
	DelayedAck  int
	NoSACK      bool
	RcvWindow   int
	OnOff       *sim.OnOffConfig
	Receiver    string       // browser: ReceiverBrowser or ReceiverEchotest
	Video       BrowserVideo // browser
	Endpoint    string       // ledbat: EndpointPion or EndpointBrowser (emulation; the simulator models both alike)
	Line        int
}

// Sweep is a file's parameter sweep. Param may name several fields
// (comma-separated), which all take each value.
type Sweep struct {
	Param  string
	Values []string
	// Metric names the summary value plotted against the swept value, e.g.
	// "flows.nada.fair_share_ratio" or "jain_index".
	Metric string
}

// File is a parsed scenario file: one run, or one per sweep value.
type File struct {
	Path  string
	Name  string
	Sweep *Sweep
	Runs  []*Scenario
}

// ParseFile reads and parses a scenario file.
func ParseFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses a scenario file's contents; name is used in error messages
// and as the default scenario name.
func Parse(name string, data []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty scenario", name)
	}
	root := doc.Content[0]
	d := &decoder{&yamlfield.Decoder{File: name}}
	sweepNode, root := splitSweep(d, root)
	f := &File{Path: name, Name: defaultName(name)}
	if sweepNode == nil {
		s := decodeScenario(d, root, name)
		if err := d.Err(); err != nil {
			return nil, err
		}
		f.Name = s.Name
		f.Runs = []*Scenario{s}
		return f, nil
	}
	sw, values := decodeSweep(d, sweepNode)
	if err := d.Err(); err != nil {
		return nil, err
	}
	f.Sweep = sw
	for i, v := range values {
		variant := root
		var err error
		for _, param := range strings.Split(sw.Param, ",") {
			if variant, err = substitute(variant, strings.TrimSpace(param), v); err != nil {
				break
			}
		}
		if err != nil {
			d.Failf(sweepNode, "sweep.param", "%v", err)
			break
		}
		s := decodeScenario(d, variant, name)
		if d.Count() > 0 {
			break
		}
		s.SweepParam, s.SweepValue = sw.Param, sw.Values[i]
		f.Name = s.Name
		f.Runs = append(f.Runs, s)
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return f, nil
}

func defaultName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

func decodeScenario(d *decoder, root *yaml.Node, file string) *Scenario {
	s := &Scenario{File: file, Name: defaultName(file), Seed: 1, Interval: 100 * time.Millisecond}
	var links, flows, sfu *yaml.Node
	d.Mapping(root, "", map[string]fieldFn{
		"name":        func(v *yaml.Node, f string) { d.Str(v, f, &s.Name) },
		"description": func(v *yaml.Node, f string) { d.Str(v, f, &s.Description) },
		"reference":   func(v *yaml.Node, f string) { d.Str(v, f, &s.Reference) },
		"duration":    func(v *yaml.Node, f string) { d.Duration(v, f, &s.Duration) },
		"interval":    func(v *yaml.Node, f string) { d.Duration(v, f, &s.Interval) },
		"seed": func(v *yaml.Node, f string) {
			var n int
			d.Integer(v, f, 0, math.MaxInt32, &n)
			s.Seed = uint64(n)
		},
		"links": func(v *yaml.Node, f string) { links = v },
		"flows": func(v *yaml.Node, f string) { flows = v },
		"sfu":   func(v *yaml.Node, f string) { sfu = v },
		"sweep": func(v *yaml.Node, f string) {},
	})
	if s.Duration <= 0 {
		d.Failf(root, "duration", "a positive duration is required (e.g. duration: 100s)")
	} else if s.Duration > 24*time.Hour {
		d.Failf(root, "duration", "longer than a day")
	}
	if s.Interval < time.Millisecond || (s.Duration > 0 && s.Interval > s.Duration) {
		d.Failf(root, "interval", "must be between 1ms and the duration")
	}
	if links == nil {
		d.Failf(root, "links", "a scenario needs links")
	} else {
		s.Links = decodeLinks(d, links)
	}
	if flows != nil {
		s.Flows = decodeFlows(d, flows, s)
	}
	if sfu != nil {
		s.SFU = decodeSFU(d, sfu, s)
	}
	if flows == nil && sfu == nil {
		d.Failf(root, "flows", "a scenario needs flows (or an sfu with sessions)")
	}
	if d.Count() == 0 {
		validate(d, s)
	}
	return s
}
