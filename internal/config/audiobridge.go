package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
)

// AudioBridge configures janus.plugin.audiobridge, the audio mixer (Janus's
// janus.plugin.audiobridge.jcfg; docs/AUDIOBRIDGE.md).
type AudioBridge struct {
	Enabled bool `yaml:"enabled"`
	// AdminKey, when set, must accompany create (Janus's general.admin_key), and lets `list` show
	// private rooms.
	AdminKey string `yaml:"admin_key"`
	// LockRTPForward and LockPlayFile extend AdminKey to rtp_forward/stop_rtp_forward and to
	// play_file/is_playing/stop_file.
	LockRTPForward bool `yaml:"lock_rtp_forward"`
	LockPlayFile   bool `yaml:"lock_play_file"`
	// SilenceGate is the level (dBov, RMS of a 20 ms frame) below which a participant's audio, once
	// 300 ms have passed since it was louder, is left out of the mix; 0 mixes everything, as Janus.
	SilenceGate float64 `yaml:"silence_gate"`
	// RecordingsDir confines every recording (the mix's WAV, participants' .mjr files): paths in
	// requests and room options are taken inside it. FilesDir confines play_file's announcements.
	RecordingsDir string `yaml:"recordings_dir"`
	FilesDir      string `yaml:"files_dir"`
	// LocalIP is the address plain-RTP participants are told to send to (and the plugin listens
	// on); empty: the host's first non-loopback IPv4 address (Janus's local_ip).
	LocalIP string `yaml:"local_ip"`
	// Limits bound what clients can make the plugin hold.
	Limits AudioBridgeLimits `yaml:"limits"`
	// Rooms exist from start-up (Janus's room-<id> sections).
	Rooms []AudioBridgeRoom `yaml:"rooms"`
}

// AudioBridgeLimits bound rooms and participants: each room with members runs a mixer, and each
// participant costs an Opus decoder and encoder.
type AudioBridgeLimits struct {
	Rooms               int `yaml:"rooms"`
	ParticipantsPerRoom int `yaml:"participants_per_room"`
}

// AudioBridgeRoom is one room, with Janus's room options. Where Janus's default is not the zero
// value, a zero (or absent) option means Janus's default: sampling_rate 16000, audio_active_packets
// 100, audio_level_average 25; audiolevel_ext absent is true and default_prebuffering absent is 6.
type AudioBridgeRoom struct {
	ID                   uint64   `yaml:"id"`
	Description          string   `yaml:"description"`
	Secret               string   `yaml:"secret"`
	PIN                  string   `yaml:"pin"`
	IsPrivate            bool     `yaml:"is_private"`
	SamplingRate         int      `yaml:"sampling_rate"`
	SpatialAudio         bool     `yaml:"spatial_audio"`
	AudioLevelExt        *bool    `yaml:"audiolevel_ext"`
	AudioLevelEvent      bool     `yaml:"audiolevel_event"`
	AudioActivePackets   int      `yaml:"audio_active_packets"`
	AudioLevelAverage    int      `yaml:"audio_level_average"`
	DefaultPrebuffering  *int     `yaml:"default_prebuffering"`
	DefaultExpectedLoss  int      `yaml:"default_expectedloss"`
	DefaultBitrate       int      `yaml:"default_bitrate"`
	Record               bool     `yaml:"record"`
	RecordFile           string   `yaml:"record_file"`
	RecordDir            string   `yaml:"record_dir"`
	MJRs                 bool     `yaml:"mjrs"`
	MJRsDir              string   `yaml:"mjrs_dir"`
	AllowRTPParticipants bool     `yaml:"allow_rtp_participants"`
	Groups               []string `yaml:"groups"`
}

// AudioBridgeSamplingRates are the mixing rates a room may have (Opus's 8, 12, 16, 24 and 48 kHz).
// The plugin's create checks against this list too.
var AudioBridgeSamplingRates = []int{8000, 12000, 16000, 24000, 48000}

// Limits of the room options, as Janus's (janus_audiobridge.c).
const (
	AudioBridgeMaxPrebuffering = 50
	AudioBridgeMaxExpectedLoss = 20
	AudioBridgeMaxGroups       = 5
)

// validate is stricter than Janus, which replaces a bad value in its configuration file by a default
// with a warning: a value strata would not use is an error at start.
func (a AudioBridge) validate() []error {
	var errs []error
	seen := map[uint64]bool{}
	for _, r := range a.Rooms {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("plugins.audiobridge.rooms: room %d: "+format, append([]any{r.ID}, args...)...))
		}
		if r.ID == 0 || seen[r.ID] {
			errs = append(errs, fmt.Errorf("plugins.audiobridge.rooms: room id %d is zero or repeated", r.ID))
		}
		seen[r.ID] = true
		if r.SamplingRate != 0 && !slices.Contains(AudioBridgeSamplingRates, r.SamplingRate) {
			bad("sampling_rate %d is not one of %v", r.SamplingRate, AudioBridgeSamplingRates)
		}
		if r.AudioActivePackets < 0 || r.AudioLevelAverage < 0 || r.AudioLevelAverage > 127 {
			bad("audio_active_packets must not be negative, audio_level_average must be 0-127")
		}
		if p := r.DefaultPrebuffering; p != nil && (*p < 0 || *p > AudioBridgeMaxPrebuffering) {
			bad("default_prebuffering %d is not 0-%d", *p, AudioBridgeMaxPrebuffering)
		}
		if r.DefaultExpectedLoss < 0 || r.DefaultExpectedLoss > AudioBridgeMaxExpectedLoss {
			bad("default_expectedloss %d is not 0-%d", r.DefaultExpectedLoss, AudioBridgeMaxExpectedLoss)
		}
		if r.DefaultBitrate != 0 && (r.DefaultBitrate < 500 || r.DefaultBitrate > 512000) {
			bad("default_bitrate %d is not 0 (libopus decides) or 500-512000", r.DefaultBitrate)
		}
		if len(r.Groups) > AudioBridgeMaxGroups {
			bad("%d groups, at most %d", len(r.Groups), AudioBridgeMaxGroups)
		}
	}
	if a.Limits.Rooms <= 0 || a.Limits.ParticipantsPerRoom <= 0 {
		errs = append(errs, errors.New("plugins.audiobridge.limits: rooms and participants_per_room must be positive"))
	}
	if a.SilenceGate > 0 || a.SilenceGate < -96 {
		errs = append(errs, fmt.Errorf("plugins.audiobridge.silence_gate %v is not between -96 and 0 dBov", a.SilenceGate))
	}
	if a.RecordingsDir == "" || a.FilesDir == "" {
		errs = append(errs, errors.New("plugins.audiobridge: recordings_dir and files_dir must not be empty"))
	}
	if a.LocalIP != "" && net.ParseIP(a.LocalIP) == nil {
		errs = append(errs, fmt.Errorf("plugins.audiobridge.local_ip %q is not an IP address", a.LocalIP))
	}
	if a.LockRTPForward && a.AdminKey == "" || a.LockPlayFile && a.AdminKey == "" {
		errs = append(errs, errors.New("plugins.audiobridge: lock_rtp_forward and lock_play_file need admin_key"))
	}
	return errs
}
