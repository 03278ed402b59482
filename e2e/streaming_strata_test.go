package e2e

import (
	"testing"
)

// startStrataStreaming starts strata with its default configuration (which has Janus's sample
// mountpoints) with the sample mountpoints' ports moved to ports.
func startStrataStreaming(t *testing.T, ports samplePorts) *abServer {
	t.Helper()
	srv := startStrata(t)
	return &abServer{
		Name:        "strata",
		HTTPAPI:     "http://" + srv.HTTPAddr() + "/janus",
		WSAPI:       "ws://" + srv.WSAddr(),
		Pages:       "http://" + srv.HTTPAddr(),
		adminURL:    "http://" + srv.AdminAddr() + "/admin",
		adminSecret: srv.AdminSecret(),
	}
}
