package e2e

import (
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// startStrataStreaming starts strata with its default configuration, which has Janus's sample
// mountpoints, with the sample RTP mountpoints' ports moved to ports.
func startStrataStreaming(t *testing.T, ports samplePorts) *abServer {
	t.Helper()
	srv := startStrata(t, func(c *config.Config) {
		moved := 0
		for i := range c.Plugins.Streaming.Mountpoints {
			m := &c.Plugins.Streaming.Mountpoints[i]
			switch m.ID {
			case 1:
				m.AudioPort, m.VideoPort = &ports.Audio, &ports.Video
				moved++
			case 123:
				for j := range m.Media {
					m.Media[j].Port = &ports.Multi[j]
				}
				moved++
			}
		}
		if moved != 2 {
			t.Fatalf("the default configuration lacks the sample mountpoints 1 and 123")
		}
	})
	return &abServer{
		Name:        "strata",
		HTTPAPI:     "http://" + srv.HTTPAddr() + "/janus",
		WSAPI:       "ws://" + srv.WSAddr(),
		Pages:       "http://" + srv.HTTPAddr(),
		adminURL:    "http://" + srv.AdminAddr() + "/admin",
		adminSecret: srv.AdminSecret(),
	}
}
