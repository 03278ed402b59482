package sim

import (
	"fmt"
	"sort"

	"github.com/strata-rtc/strata/cc"
)

// ControllerInfo describes a congestion controller the simulator can run.
type ControllerInfo struct {
	Name   string // as written in scenario files: "gcc", "nada", "cubic", ...
	Kind   string // flow kind it drives: "media", "tcp" or "ledbat"
	Doc    string
	Params []ParamSpec
	build  func(p Params, env buildEnv) (Controllers, error)
}

// buildEnv is what a controller needs to know about its flow.
type buildEnv struct {
	mss int
}

// Controllers is a built controller: a rate controller with an optional
// receive-side half, or a window controller.
type Controllers struct {
	Rate   cc.RateController
	Rx     ReceiveSide
	Window cc.WindowController
}

var registry = map[string]*ControllerInfo{}

func register(info *ControllerInfo) { registry[info.Name] = info }

// LookupController returns the controller registered under name.
func LookupController(name string) (*ControllerInfo, bool) {
	info, ok := registry[name]
	return info, ok
}

// ControllerNames lists the controllers of a flow kind ("" for all), sorted.
func ControllerNames(kind string) []string {
	var out []string
	for name, info := range registry {
		if kind == "" || info.Kind == kind {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Param returns the parameter with the given name.
func (c *ControllerInfo) Param(name string) (ParamSpec, bool) { return findSpec(c.Params, name) }

// Build creates a controller with params applied over the defaults; mss is
// the segment size for window controllers.
func (c *ControllerInfo) Build(params Params, mss int) (Controllers, error) {
	for name := range params {
		if _, ok := c.Param(name); !ok {
			return Controllers{}, fmt.Errorf("%s: unknown parameter %q", c.Name, name)
		}
	}
	return c.build(params, buildEnv{mss: mss})
}
