package config

import "errors"

// RecordPlay configures janus.plugin.recordplay (Janus's janus.plugin.recordplay.jcfg;
// docs/RECORDPLAY.md).
type RecordPlay struct {
	Enabled bool `yaml:"enabled"`
	// Path is the recordings directory: where recordings are written (.mjr files and their .nfo)
	// and listed from; created if missing.
	Path string `yaml:"path"`
	// Events is Janus's switch for event handlers, which strata does not have; accepted, unused.
	Events bool `yaml:"events"`
}

func (r RecordPlay) validate() []error {
	if r.Enabled && r.Path == "" {
		return []error{errors.New("plugins.recordplay.path must not be empty")}
	}
	return nil
}
