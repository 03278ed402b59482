package audiobridge

import (
	"slices"

	"github.com/strata-rtc/strata/internal/plugin"
)

// The asynchronous requests: Janus acks them and reports their result (or error) in an event.

// Join is `join`, and ChangeRoom's body too.
type Join struct {
	Room    uint64
	ID      uint64 // 0: the plugin chooses
	Group   *string
	PIN     *string
	Display *string
	Token   *string
	Secret  *string // present: the participant claims to be the room's admin (mute_room spares it)
	Codec   *string
	Record  bool
	// Filename is the .mjr basename for Record ("-audio.mjr" is appended).
	Filename      *string
	GenerateOffer bool
	// RTP makes this a plain-RTP participant (allow_rtp_participants); ignored with a JSEP.
	RTP *RTPEndpoint
	Settings
}

// Settings are a participant's media settings as join, changeroom and configure give them; nil
// keeps the current value (or the room's default at join).
type Settings struct {
	Muted              *bool
	Prebuffer          *int
	Bitrate            *int
	Quality            *int
	ExpectedLoss       *int
	Volume             *int
	SpatialPosition    *int
	AudioLevelAverage  *int
	AudioActivePackets *int
}

// RTPEndpoint is join's "rtp" object: where a plain-RTP participant wants the mix.
type RTPEndpoint struct {
	IP            string
	Port          int
	PayloadType   *int
	AudioLevelExt *int
	FEC           bool
}

// ChangeRoom is `changeroom`: leave the room and join another on the same PeerConnection.
type ChangeRoom struct{ Join }

// Configure is `configure`: settings, display, group, per-participant recording, and the JSEP.
type Configure struct {
	Display       *string
	Group         *string
	Record        *bool
	Filename      *string
	GenerateOffer bool
	// Update asks for an ICE restart offer when the plugin offered (generate_offer sessions).
	Update bool
	Settings
}

// Leave is `leave`; Hangup is `hangup` (close the PeerConnection, leaving the room).
type (
	Leave  struct{}
	Hangup struct{}
)

func (*Join) Name() string       { return "join" }
func (*ChangeRoom) Name() string { return "changeroom" }
func (*Configure) Name() string  { return "configure" }
func (*Leave) Name() string      { return "leave" }
func (*Hangup) Name() string     { return "hangup" }

// Janus's per-participant defaults and bounds.
const (
	DefaultQuality  = 4   // Opus complexity (DEFAULT_COMPLEXITY)
	DefaultVolume   = 100 // percent
	DefaultPosition = 50  // spatial position: 0 left, 50 centre, 100 right
	// ChangeRoomPosition is changeroom's default spatial position in Janus 1.1 (sic).
	ChangeRoomPosition = 64
	MaxPrebuffering    = 50  // MAX_PREBUFFERING: more falls back to the room's default
	MaxExpectedLoss    = 20  // percent
	MinOpusBitrate     = 500 // bit/s: outside [Min, Max] falls back to the room's default
	MaxOpusBitrate     = 512000
	DefaultRTPOpusPT   = 100 // rtp_forward's payload type for Opus when ptype is absent
)

var joinParams = []plugin.Param{
	str("display"), str("token"), str("group"), boo("muted"), str("codec"), pos("prebuffer"),
	pos("bitrate"), pos("quality"), pos("expected_loss"), pos("volume"), pos("spatial_position"),
	pos("audio_level_average"), pos("audio_active_packets"), boo("record"), str("filename"),
	boo("generate_offer"), plugin.Param{Name: "rtp", Kind: plugin.Object}, secretParam,
	roomParam, idOptParam, str("pin"),
}

// rtpParams are checked inside the rtp object. (Janus 1.1 checks them against the request itself,
// so a bad rtp.port slips through and a top-level "port" is refused; strata checks the object.)
var rtpParams = []plugin.Param{
	str("ip"), pos("port"), pos("payload_type"), pos("audiolevel_ext"), boo("fec"),
}

func parseJoin(b plugin.Body) (Request, *Error) {
	j, err := joinFromBody(b)
	if err != nil {
		return nil, err
	}
	return j, nil
}

func parseChangeRoom(b plugin.Body) (Request, *Error) {
	j, err := joinFromBody(b)
	if err != nil {
		return nil, err
	}
	return &ChangeRoom{*j}, nil
}

func joinFromBody(b plugin.Body) (*Join, *Error) {
	if err := b.Validate(joinParams...); err != nil {
		return nil, err
	}
	j := &Join{
		Room: b.Uint("room"), ID: b.Uint("id"), Group: b.OptStr("group"), PIN: b.OptStr("pin"),
		Display: b.OptStr("display"), Token: b.OptStr("token"), Secret: b.OptStr("secret"),
		Codec: b.OptStr("codec"), Record: b.Bool("record"), Filename: b.OptStr("filename"),
		GenerateOffer: b.Bool("generate_offer"), Settings: settingsFromBody(b),
	}
	if b.Has("rtp") {
		o := b.Object("rtp")
		if err := o.Validate(rtpParams...); err != nil {
			return nil, err
		}
		j.RTP = &RTPEndpoint{IP: o.Str("ip"), Port: int(min(o.Uint("port"), 1<<31-1)),
			PayloadType: optInt(o, "payload_type"), AudioLevelExt: optInt(o, "audiolevel_ext"), FEC: o.Bool("fec")}
	}
	return j, nil
}

var configureParams = []plugin.Param{
	boo("muted"), pos("prebuffer"), pos("bitrate"), pos("quality"), pos("expected_loss"), pos("volume"),
	str("group"), pos("spatial_position"), boo("record"), str("filename"), str("display"),
	boo("generate_offer"), boo("update"),
}

func parseConfigure(b plugin.Body) (Request, *Error) {
	if err := b.Validate(configureParams...); err != nil {
		return nil, err
	}
	return &Configure{
		Display: b.OptStr("display"), Group: b.OptStr("group"), Record: b.OptBool("record"),
		Filename: b.OptStr("filename"), GenerateOffer: b.Bool("generate_offer"), Update: b.Bool("update"),
		Settings: settingsFromBody(b),
	}, nil
}

func settingsFromBody(b plugin.Body) Settings {
	return Settings{
		Muted: b.OptBool("muted"), Prebuffer: optInt(b, "prebuffer"), Bitrate: optInt(b, "bitrate"),
		Quality: optInt(b, "quality"), ExpectedLoss: optInt(b, "expected_loss"), Volume: optInt(b, "volume"),
		SpatialPosition: optInt(b, "spatial_position"), AudioLevelAverage: optInt(b, "audio_level_average"),
		AudioActivePackets: optInt(b, "audio_active_packets"),
	}
}

// Codecs a participant may use (join's "codec").
var Codecs = []string{"opus", "pcma", "pcmu"}

// Participant is a participant's resolved settings.
type Participant struct {
	Muted              bool
	Codec              string
	Prebuffer          int
	Bitrate            int // 0: libopus decides
	Quality            int
	ExpectedLoss       int
	Volume             int
	SpatialPosition    int
	AudioLevelAverage  int
	AudioActivePackets int
}

// NewParticipant resolves a join's settings against its room's defaults, with Janus's checks of
// values, which Janus makes after the room, pin, token, secret and group checks: a quality outside
// 1-10, an expected_loss above 20 or an unknown codec is 484; a prebuffer above 50 or a bitrate
// outside 500-512000 quietly falls back to the room's default; a spatial position above 100 is 100.
func (j *Join) NewParticipant(room *RoomOptions) (Participant, *Error) {
	return j.newParticipant(room, DefaultPosition)
}

// NewParticipant is join's for the new room, except that Janus 1.1 places a participant who
// changes room without a spatial_position at 64, not 50 (janus_audiobridge.c, changeroom).
func (c *ChangeRoom) NewParticipant(room *RoomOptions) (Participant, *Error) {
	return c.newParticipant(room, ChangeRoomPosition)
}

func (j *Join) newParticipant(room *RoomOptions, position int) (Participant, *Error) {
	p := Participant{
		Codec: "opus", Prebuffer: room.DefaultPrebuffering, Bitrate: room.DefaultBitrate, Quality: DefaultQuality,
		ExpectedLoss: room.DefaultExpectedLoss, Volume: DefaultVolume, SpatialPosition: position,
		AudioLevelAverage: room.AudioLevelAverage, AudioActivePackets: room.AudioActivePackets,
	}
	if err := j.Settings.apply(&p, room); err != nil {
		return p, err
	}
	if j.Codec != nil {
		p.Codec = *j.Codec
		if !slices.Contains(Codecs, p.Codec) {
			return p, errorf(ErrInvalid, "Invalid element (codec must opus, pcmu or pcma)")
		}
	}
	return p, nil
}

// Apply changes a participant's settings as configure does, with the same checks as join; on an
// error p is unchanged.
func (c *Configure) Apply(p *Participant, room *RoomOptions) *Error {
	next := *p
	if err := c.Settings.apply(&next, room); err != nil {
		return err
	}
	*p = next
	return nil
}

func (s *Settings) apply(p *Participant, room *RoomOptions) *Error {
	if s.Quality != nil && (*s.Quality < 1 || *s.Quality > 10) {
		return errorf(ErrInvalid, "Invalid element (quality should be a positive integer between 1 and 10)")
	}
	if s.ExpectedLoss != nil && *s.ExpectedLoss > MaxExpectedLoss {
		return errorf(ErrInvalid, "Invalid element (expected_loss should be a positive integer between 0 and 20)")
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	if s.Muted != nil {
		p.Muted = *s.Muted
	}
	set(&p.Quality, s.Quality)
	set(&p.ExpectedLoss, s.ExpectedLoss)
	set(&p.Volume, s.Volume)
	set(&p.SpatialPosition, s.SpatialPosition)
	p.SpatialPosition = min(p.SpatialPosition, 100)
	if s.Prebuffer != nil {
		p.Prebuffer = *s.Prebuffer
		if p.Prebuffer > MaxPrebuffering {
			p.Prebuffer = room.DefaultPrebuffering
		}
	}
	if s.Bitrate != nil {
		p.Bitrate = *s.Bitrate
		if p.Bitrate < MinOpusBitrate || p.Bitrate > MaxOpusBitrate {
			p.Bitrate = room.DefaultBitrate
		}
	}
	// Janus uses a per-user override only when it is positive.
	if s.AudioLevelAverage != nil && *s.AudioLevelAverage > 0 {
		p.AudioLevelAverage = *s.AudioLevelAverage
	}
	if s.AudioActivePackets != nil && *s.AudioActivePackets > 0 {
		p.AudioActivePackets = *s.AudioActivePackets
	}
	return nil
}
