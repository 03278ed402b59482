package audiobridge

import (
	"slices"
	"strconv"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
)

// Janus's room defaults.
const (
	DefaultSamplingRate       = 16000
	DefaultAudioActivePackets = 100 // 2 s of 20 ms packets
	DefaultAudioLevelAverage  = 25  // -dBov: lower is louder, 127 silence
	DefaultPrebuffering       = 6   // DEFAULT_PREBUFFERING
)

// RoomOptions are a room's options with every default resolved.
type RoomOptions struct {
	Description string
	Secret      string
	PIN         string
	IsPrivate   bool
	// CheckTokens is on when create carried "allowed" (even empty) or `allowed` enabled it; then
	// join and changeroom need a token in Allowed.
	CheckTokens bool
	Allowed     []string

	SamplingRate         int
	SpatialAudio         bool
	AudioLevelExt        bool
	AudioLevelEvent      bool
	AudioActivePackets   int
	AudioLevelAverage    int
	DefaultPrebuffering  int
	DefaultExpectedLoss  int
	DefaultBitrate       int // 0: libopus decides
	Record               bool
	RecordFile           string
	RecordDir            string
	MJRs                 bool
	MJRsDir              string
	AllowRTPParticipants bool
	Groups               []string
}

// DefaultRoomOptions are the options of a room created with nothing but its id.
func DefaultRoomOptions() RoomOptions {
	return RoomOptions{
		SamplingRate:        DefaultSamplingRate,
		AudioLevelExt:       true,
		AudioActivePackets:  DefaultAudioActivePackets,
		AudioLevelAverage:   DefaultAudioLevelAverage,
		DefaultPrebuffering: DefaultPrebuffering,
	}
}

// SupportedSamplingRate reports whether a room can mix at rate (8, 12, 16, 24 or 48 kHz).
func SupportedSamplingRate(rate int) bool {
	return slices.Contains(config.AudioBridgeSamplingRates, rate)
}

// OptionsFromConfig resolves a room of the configuration (config.Parse has validated it; the
// description defaults to "Room <id>" as in Janus).
func OptionsFromConfig(r config.AudioBridgeRoom) RoomOptions {
	o := DefaultRoomOptions()
	o.Description = r.Description
	if o.Description == "" {
		o.Description = defaultDescription(r.ID)
	}
	o.Secret, o.PIN, o.IsPrivate = r.Secret, r.PIN, r.IsPrivate
	if r.SamplingRate != 0 {
		o.SamplingRate = r.SamplingRate
	}
	o.SpatialAudio, o.AudioLevelEvent = r.SpatialAudio, r.AudioLevelEvent
	if r.AudioLevelExt != nil {
		o.AudioLevelExt = *r.AudioLevelExt
	}
	if r.AudioActivePackets > 0 {
		o.AudioActivePackets = r.AudioActivePackets
	}
	if r.AudioLevelAverage > 0 {
		o.AudioLevelAverage = r.AudioLevelAverage
	}
	if r.DefaultPrebuffering != nil {
		o.DefaultPrebuffering = *r.DefaultPrebuffering
	}
	o.DefaultExpectedLoss, o.DefaultBitrate = r.DefaultExpectedLoss, r.DefaultBitrate
	o.Record, o.RecordFile, o.RecordDir = r.Record, r.RecordFile, r.RecordDir
	o.MJRs, o.MJRsDir = r.MJRs, r.MJRsDir
	o.AllowRTPParticipants = r.AllowRTPParticipants
	if len(r.Groups) > 0 {
		o.Groups = slices.Clone(r.Groups)
	}
	return o
}

func defaultDescription(id uint64) string { return "Room " + strconv.FormatUint(id, 10) }

// optionsFromCreate resolves a validated create body as Janus does: an empty description is
// "Room <id>" (filled by the plugin once it has chosen the id), is_private defaults to false,
// audio_active_packets and audio_level_average of 0 keep the defaults, a default_prebuffering above
// 50 is 6, a default_expectedloss above 20 is 0 and a default_bitrate outside 500-512000 is 0, each
// with no error (Janus only logs a warning).
func optionsFromCreate(b plugin.Body, allowed, groups []string) RoomOptions {
	o := DefaultRoomOptions()
	o.Description, o.Secret, o.PIN = b.Str("description"), b.Str("secret"), b.Str("pin")
	o.IsPrivate = b.Bool("is_private")
	o.CheckTokens, o.Allowed = b.Has("allowed"), allowed
	o.SpatialAudio = b.Bool("spatial_audio")
	if b.Has("audiolevel_ext") {
		o.AudioLevelExt = b.Bool("audiolevel_ext")
	}
	o.AudioLevelEvent = b.Bool("audiolevel_event")
	if n := b.Int("audio_active_packets"); n > 0 {
		o.AudioActivePackets = int(min(n, 1<<31-1))
	}
	if n := b.Int("audio_level_average"); n > 0 {
		o.AudioLevelAverage = int(min(n, 1<<31-1))
	}
	if b.Has("default_prebuffering") && b.Int("default_prebuffering") <= MaxPrebuffering {
		o.DefaultPrebuffering = int(b.Int("default_prebuffering"))
	}
	if n := b.Int("default_expectedloss"); n <= MaxExpectedLoss {
		o.DefaultExpectedLoss = int(n)
	}
	if n := b.Int("default_bitrate"); n >= MinOpusBitrate && n <= MaxOpusBitrate {
		o.DefaultBitrate = int(n)
	}
	o.Record, o.RecordFile, o.RecordDir = b.Bool("record"), b.Str("record_file"), b.Str("record_dir")
	o.MJRs, o.MJRsDir = b.Bool("mjrs"), b.Str("mjrs_dir")
	o.AllowRTPParticipants = b.Bool("allow_rtp_participants")
	if len(groups) > 0 { // an empty list is no groups
		o.Groups = groups
	}
	o.SamplingRate = 0 // Create.Check sets it
	return o
}
