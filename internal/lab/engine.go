package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-rtc/strata/internal/emu"
	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/report"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// The lab's engines.
const (
	// EngineSim is the deterministic discrete-event simulator (internal/sim).
	EngineSim = "sim"
	// EngineEmu runs the scenario on real network stacks on this machine
	// (internal/emu); it needs root.
	EngineEmu = "emu"
)

// canRun says why engine cannot run s (nil if it can).
func canRun(engine string, s *scenario.Scenario) error {
	switch engine {
	case EngineSim:
		return s.NeedsEmulation()
	case EngineEmu:
		return emu.CanRun(s)
	}
	return fmt.Errorf("unknown engine %q (want %s or %s)", engine, EngineSim, EngineEmu)
}

// runnable keeps the files engine can run. A suite skips the others (the
// returned reasons say which and why); a file given on its own is an error.
func runnable(files []scenarioFile, engine string, suite bool) ([]scenarioFile, []string, error) {
	var keep []scenarioFile
	var skipped []string
	for _, f := range files {
		var err error
		for _, s := range f.parsed.Runs {
			if err = canRun(engine, s); err != nil {
				break
			}
		}
		switch {
		case err == nil:
			keep = append(keep, f)
		case suite:
			skipped = append(skipped, fmt.Sprintf("%s: %v", f.name, err))
		default:
			return nil, nil, fmt.Errorf("%s: %w", f.path, err)
		}
	}
	return keep, skipped, nil
}

// record runs s on the engine and returns its recording. An emulation's
// endpoint diagnostics go to emu.log in the run's directory, an SFU's logs
// and its controller's final state to sfu/.
func record(ctx context.Context, s *scenario.Scenario, seed uint64, engine, dir string) (*metrics.Recording, error) {
	if engine == EngineSim {
		sm, err := s.Build(seed)
		if err != nil {
			return nil, err
		}
		if err := sm.Run(); err != nil {
			return nil, err
		}
		return metrics.RecordingOf(sm), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("not run: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "emu.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	return emu.Run(ctx, s, seed, emu.Options{Log: log, Dir: dir})
}

// resultEntries names an engine's entries for the results document: the
// simulator's tables keep their names ("lab:seed004/x"), the emulator's are
// "emu/..." beside them.
func resultEntries(engine string, entries []report.Entry) []report.Entry {
	if engine == EngineSim {
		return entries
	}
	out := make([]report.Entry, len(entries))
	for i, e := range entries {
		e.Name = engine + "/" + e.Name
		out[i] = e
	}
	return out
}
