package server

import (
	"crypto/rand"
	"log/slog"
	"slices"

	"github.com/strata-rtc/strata/internal/config"
)

// withGeneratedSecrets returns a copy of cfg in which the secrets the configuration leaves empty for
// strata to choose are filled with random ones, each written once to the log so the operator can copy
// it: the admin secret when the admin API listens (an admin API without a secret would answer anyone
// who reaches it), and the secret of each room of the configuration (a room without one can be
// destroyed by anyone; the sample rooms must not share a published password either). Rooms created
// through the API keep Janus's meaning of no secret. cfg itself is not changed.
func withGeneratedSecrets(cfg *config.Config, log *slog.Logger) *config.Config {
	c := *cfg
	if c.Transports.Admin.Running() && c.Transports.Admin.AdminSecret == "" {
		c.Transports.Admin.AdminSecret = rand.Text()
		log.Warn("admin API secret generated for this run (set transports.admin.admin_secret to choose one)",
			"admin_secret", c.Transports.Admin.AdminSecret)
	}
	vr := &c.Plugins.VideoRoom
	vr.Rooms = slices.Clone(vr.Rooms)
	for i := range vr.Rooms {
		generateRoomSecret(vr.Enabled, &vr.Rooms[i].Secret, "videoroom", vr.Rooms[i].ID, log)
	}
	ab := &c.Plugins.AudioBridge
	ab.Rooms = slices.Clone(ab.Rooms)
	for i := range ab.Rooms {
		generateRoomSecret(ab.Enabled, &ab.Rooms[i].Secret, "audiobridge", ab.Rooms[i].ID, log)
	}
	tr := &c.Plugins.TextRoom
	tr.Rooms = slices.Clone(tr.Rooms)
	for i := range tr.Rooms {
		generateRoomSecret(tr.Enabled, &tr.Rooms[i].Secret, "textroom", tr.Rooms[i].ID, log)
	}
	st := &c.Plugins.Streaming
	st.Mountpoints = slices.Clone(st.Mountpoints)
	for i := range st.Mountpoints {
		generateMountpointSecret(st.Enabled, &st.Mountpoints[i].Secret, st.Mountpoints[i].ID, log)
	}
	return &c
}

// generateRoomSecret fills an empty room secret of an enabled plugin with a random one, and logs it.
func generateRoomSecret(enabled bool, secret *string, plugin string, room any, log *slog.Logger) {
	if !enabled || *secret != "" {
		return
	}
	*secret = rand.Text()
	log.Info(plugin+" room secret generated for this run (needed to edit or destroy the room, not to join it)",
		"room", room, "secret", *secret)
}

// generateMountpointSecret is generateRoomSecret for a streaming mountpoint of the configuration
// (Janus's samples have the published "adminpwd").
func generateMountpointSecret(enabled bool, secret *string, id uint64, log *slog.Logger) {
	if !enabled || *secret != "" {
		return
	}
	*secret = rand.Text()
	log.Info("streaming mountpoint secret generated for this run (needed to edit, destroy or record the mountpoint, not to watch it)",
		"mountpoint", id, "secret", *secret)
}

// AdminSecret is the admin API's secret: the configured one, or the one generated at New.
func (s *Server) AdminSecret() string { return s.cfg.Transports.Admin.AdminSecret }

// Config is the configuration the server runs with: the one given to New, with generated secrets.
func (s *Server) Config() *config.Config { return s.cfg }
