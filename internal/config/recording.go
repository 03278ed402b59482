package config

import (
	"fmt"
	"sort"

	"github.com/strata-rtc/strata/internal/media"
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
		f, err := playable.FormatByName(r.Containers[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("recording.containers.%s: %w", k, err))
			continue
		}
		c := media.CodecOpus
		if k != "audio" {
			c = media.CodecByName(k)
			if c == media.CodecUnknown || !c.IsVideo() {
				errs = append(errs, fmt.Errorf("recording.containers: %q is not a video codec (vp8, vp9, av1, h264) or audio", k))
				continue
			}
		}
		if !f.Fits(c) {
			errs = append(errs, fmt.Errorf("recording.containers.%s: %s does not hold %s", k, f, c))
		}
	}
	return errs
}
