package server

import (
	"math"
	"runtime/debug"

	"github.com/strata-rtc/strata/internal/config"
)

// applyRuntime sets the garbage collector's target and soft memory limit (configuration `runtime`).
// They belong to the process, not to one Server: the last Server created sets them.
func applyRuntime(r config.Runtime) {
	debug.SetGCPercent(r.GCPercent)
	limit := r.MemoryLimit
	if limit == 0 {
		limit = math.MaxInt64 // the runtime's "no limit"
	}
	debug.SetMemoryLimit(limit)
}
