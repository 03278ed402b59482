package config

import (
	"fmt"
	"sort"

	"github.com/strata-rtc/strata/internal/record/playable"
)

// Recording configures what recordings write beside the .mjr files (record.SessionOptions).
type Recording struct {
	// Playable writes one playable file per recorded participant.
	Playable bool `yaml:"playable"`
	// Containers names the playable file's container by video codec, and by "audio" for a
	// participant without video.
	Containers map[string]string `yaml:"containers"`
}

// validate checks every container is one playable writes and holds the codec it is given for.
func (r Recording) validate() []error {
	var errs []error
	keys := make([]string, 0, len(r.Containers))
	for k := range r.Containers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := playable.CheckFormat(k, r.Containers[k]); err != nil {
			errs = append(errs, fmt.Errorf("recording.containers.%s: %w", k, err))
		}
	}
	return errs
}
