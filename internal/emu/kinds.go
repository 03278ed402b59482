package emu

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/emu/browser"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/flows"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// runInfo is what some constructors need beyond their flow's Env.
type runInfo struct {
	opt      Options
	interval time.Duration // the scenario's stats interval
}

// kinds maps a scenario flow kind onto the constructor of its real
// endpoints: the one table of what the engine runs.
var kinds = map[string]func(endpoint.Env, runInfo) (endpoint.Flow, error){
	scenario.KindTCP:   func(env endpoint.Env, _ runInfo) (endpoint.Flow, error) { return flows.NewTCP(env) },
	scenario.KindCBR:   func(env endpoint.Env, _ runInfo) (endpoint.Flow, error) { return flows.NewCBR(env) },
	scenario.KindMedia: func(env endpoint.Env, _ runInfo) (endpoint.Flow, error) { return flows.NewMedia(env) },
	scenario.KindLEDBAT: func(env endpoint.Env, _ runInfo) (endpoint.Flow, error) {
		return flows.NewLowPrio(env)
	},
	scenario.KindBrowser: func(env endpoint.Env, ri runInfo) (endpoint.Flow, error) {
		return browser.New(env, browser.Options{Strata: ri.opt.Strata, Interval: ri.interval})
	},
}

// CanRun fails with a clear error when a flow's kind cannot run in
// emulation, before anything is built.
func CanRun(s *scenario.Scenario) error {
	for _, f := range s.Flows {
		if _, ok := kinds[f.Kind]; ok {
			continue
		}
		return fmt.Errorf("flow %s: kind %s cannot run in emulation (it runs %s)", f.Name, f.Kind, strings.Join(Kinds(), ", "))
	}
	return nil
}

// Kinds lists the flow kinds the engine runs.
func Kinds() []string {
	var out []string
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
