package config

import (
	"errors"
	"fmt"
)

// Runtime tunes Go's garbage collector for the whole process (runtime/debug.SetGCPercent and
// SetMemoryLimit, GOGC and GOMEMLIMIT in the environment).
type Runtime struct {
	// GCPercent is how far the heap may grow past what was live after a collection, in percent, before
	// the next one; -1 turns the collector off (then only memory_limit starts one).
	GCPercent int `yaml:"gc_percent"`
	// MemoryLimit is a soft limit on the memory the Go runtime holds, in bytes; 0: none.
	MemoryLimit int64 `yaml:"memory_limit"`
}

func (r Runtime) validate() []error {
	var errs []error
	if r.GCPercent < -1 {
		errs = append(errs, fmt.Errorf("runtime.gc_percent: %d; want a percentage, or -1 for no collection but memory_limit's", r.GCPercent))
	}
	if r.MemoryLimit < 0 {
		errs = append(errs, errors.New("runtime.memory_limit: must not be negative (0 is no limit)"))
	}
	if r.GCPercent == -1 && r.MemoryLimit == 0 {
		errs = append(errs, errors.New("runtime.gc_percent: -1 (no collection) needs a memory_limit"))
	}
	return errs
}
