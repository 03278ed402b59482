package audiobridge

import (
	"slices"
	"strings"

	"github.com/strata-rtc/strata/internal/plugin"
)

// The synchronous requests. Optional elements are pointers (nil: absent), because Janus often
// treats absent differently from the zero value. Secrets are kept as given and applied with
// CheckSecret once the room is known.

// Create is `create`: a new room. Room 0 asks the plugin to choose an id.
type Create struct {
	Room      uint64
	Permanent bool
	AdminKey  *string
	Options   RoomOptions
	// SamplingRate is the rate asked for (nil: absent), checked by Check: Janus reports an
	// unsupported one (499) only after checking admin_key and that the id is free.
	SamplingRate *int
}

// Edit is `edit`: new description, secret, pin, privacy or recording folders of a room.
type Edit struct {
	Room           uint64
	Secret         *string
	NewDescription *string
	NewSecret      *string
	NewPIN         *string // "" removes the pin
	NewIsPrivate   *bool
	NewRecordDir   *string
	NewMJRsDir     *string
	Permanent      bool
}

// Destroy is `destroy`.
type Destroy struct {
	Room      uint64
	Secret    *string
	Permanent bool
}

// Exists is `exists`.
type Exists struct{ Room uint64 }

// ListParticipants is `listparticipants`.
type ListParticipants struct{ Room uint64 }

// List is `list`. Private rooms are listed only with the right admin_key.
type List struct{ AdminKey *string }

// Allowed is `allowed`: Action is enable, disable, add or remove (lower case; Janus compares them
// case-insensitively); Tokens are used by add and remove.
type Allowed struct {
	Room   uint64
	Secret *string
	Action string
	Tokens []string
	// tokensErr is a bad "allowed" array of add or remove, which Janus reports only once the room
	// and secret have passed (Check).
	tokensErr *Error
}

// ParticipantAdmin is `kick`, `mute` or `unmute` of one participant (Op says which).
type ParticipantAdmin struct {
	Op     string
	Room   uint64
	ID     uint64
	Secret *string
}

// RoomAdmin is `kick_all`, `mute_room`, `unmute_room` or `listforwarders` (Op says which).
type RoomAdmin struct {
	Op     string
	Room   uint64
	Secret *string
}

// ResetDecoder is `resetdecoder`: the sender's own Opus decoder is recreated.
type ResetDecoder struct{}

// RTPForward is `rtp_forward`: the room's mix (or a group's) to host:port as plain RTP or SRTP.
type RTPForward struct {
	Room       uint64
	Secret     *string
	AdminKey   *string
	Group      *string
	SSRC       *uint32 // nil: the stream id
	Codec      string  // opus (default), pcma, pcmu
	PType      *int    // nil: 100 for Opus; G.711's static types otherwise
	Host       string
	HostFamily string // "", ipv4 or ipv6
	Port       int
	SRTPSuite  int // 0 (none), 32 or 80
	SRTPCrypto string
	AlwaysOn   bool
}

// StopRTPForward is `stop_rtp_forward`.
type StopRTPForward struct {
	Room     uint64
	StreamID uint64
	Secret   *string
	AdminKey *string
}

// PlayFile is `play_file`: an Ogg/Opus file into the mix.
type PlayFile struct {
	Room     uint64
	Secret   *string
	AdminKey *string
	Group    *string
	FileID   *string // nil: the plugin chooses one
	Filename string
	Loop     bool
}

// FileCheck is `is_playing` or `stop_file` (Op says which).
type FileCheck struct {
	Op       string
	Room     uint64
	Secret   *string
	AdminKey *string
	FileID   string
}

// EnableRecording is `enable_recording`: start or stop the room's recording of the mix.
type EnableRecording struct {
	Room       uint64
	Secret     *string
	Record     bool
	RecordFile *string
	RecordDir  *string
}

// EnableMJRs is `enable_mjrs`: start or stop recording each participant to .mjr files.
type EnableMJRs struct {
	Room    uint64
	Secret  *string
	MJRs    bool
	MJRsDir *string
}

func (*Create) Name() string           { return "create" }
func (*Edit) Name() string             { return "edit" }
func (*Destroy) Name() string          { return "destroy" }
func (*Exists) Name() string           { return "exists" }
func (*ListParticipants) Name() string { return "listparticipants" }
func (*List) Name() string             { return "list" }
func (*Allowed) Name() string          { return "allowed" }
func (r *ParticipantAdmin) Name() string {
	return r.Op
}
func (r *RoomAdmin) Name() string     { return r.Op }
func (*ResetDecoder) Name() string    { return "resetdecoder" }
func (*RTPForward) Name() string      { return "rtp_forward" }
func (*StopRTPForward) Name() string  { return "stop_rtp_forward" }
func (*PlayFile) Name() string        { return "play_file" }
func (r *FileCheck) Name() string     { return r.Op }
func (*EnableRecording) Name() string { return "enable_recording" }
func (*EnableMJRs) Name() string      { return "enable_mjrs" }

// MaxGroups is how many groups a room may have (JANUS_AUDIOBRIDGE_MAX_GROUPS).
const MaxGroups = 5

var createParams = []plugin.Param{
	str("description"), str("secret"), str("pin"), boo("is_private"), arr("allowed"),
	pos("sampling_rate"), pos("sampling"), boo("spatial_audio"), boo("record"), str("record_file"),
	str("record_dir"), boo("mjrs"), str("mjrs_dir"), boo("allow_rtp_participants"), boo("permanent"),
	boo("audiolevel_ext"), boo("audiolevel_event"), pos("audio_active_packets"),
	pos("audio_level_average"), pos("default_prebuffering"), pos("default_expectedloss"),
	pos("default_bitrate"), arr("groups"), roomOptParam, adminKey,
}

func parseCreate(b plugin.Body) (Request, *Error) {
	if err := b.Validate(createParams...); err != nil {
		return nil, err
	}
	allowed, err := b.Strings("allowed", "Invalid element in the allowed array (not a string)")
	if err != nil {
		return nil, err
	}
	groups, err := b.Strings("groups", "Invalid element in the groups array (not a string)")
	if err != nil {
		return nil, err
	}
	if len(groups) > MaxGroups {
		return nil, errorf(ErrInvalid, "Too many groups specified (max %d allowed)", MaxGroups)
	}
	c := &Create{Room: b.Uint("room"), Permanent: b.Bool("permanent"), AdminKey: b.OptStr("admin_key")}
	c.Options = optionsFromCreate(b, allowed, groups)
	c.SamplingRate = optInt(b, "sampling_rate")
	if c.SamplingRate == nil {
		c.SamplingRate = optInt(b, "sampling") // Janus still reads the old name
	}
	return c, nil
}

// Check applies what Janus checks of a create after admin_key and the room id: the sampling rate
// (499 "Unsupported sampling rate N"). It sets Options.SamplingRate.
func (c *Create) Check() *Error {
	rate := DefaultSamplingRate
	if c.SamplingRate != nil {
		rate = *c.SamplingRate
	}
	if !SupportedSamplingRate(rate) {
		return errorf(ErrUnknown, "Unsupported sampling rate %d", rate)
	}
	c.Options.SamplingRate = rate
	return nil
}

var editParams = []plugin.Param{
	secretParam, str("new_description"), str("new_secret"), str("new_pin"), boo("new_is_private"),
	str("new_record_dir"), str("new_mjrs_dir"), boo("permanent"), roomParam,
}

func parseEdit(b plugin.Body) (Request, *Error) {
	if err := b.Validate(editParams...); err != nil {
		return nil, err
	}
	return &Edit{
		Room: b.Uint("room"), Secret: b.OptStr("secret"), NewDescription: b.OptStr("new_description"),
		NewSecret: b.OptStr("new_secret"), NewPIN: b.OptStr("new_pin"), NewIsPrivate: b.OptBool("new_is_private"),
		NewRecordDir: b.OptStr("new_record_dir"), NewMJRsDir: b.OptStr("new_mjrs_dir"), Permanent: b.Bool("permanent"),
	}, nil
}

func parseDestroy(b plugin.Body) (Request, *Error) {
	// Janus checks secret's type only when the room has one; strata always does (docs/AUDIOBRIDGE.md).
	if err := b.Validate(boo("permanent"), roomParam, secretParam); err != nil {
		return nil, err
	}
	return &Destroy{Room: b.Uint("room"), Secret: b.OptStr("secret"), Permanent: b.Bool("permanent")}, nil
}

func parseList(b plugin.Body) (Request, *Error) {
	// Janus only looks at a non-empty string admin_key here and ignores anything else.
	var key *string
	if s := b.OptStr("admin_key"); s != nil && b.Validate(adminKey) == nil && *s != "" {
		key = s
	}
	return &List{AdminKey: key}, nil
}

// AllowedActions are the actions of `allowed`.
var AllowedActions = []string{"enable", "disable", "add", "remove"}

func parseAllowed(b plugin.Body) (Request, *Error) {
	if err := b.Validate(secretParam, need(str("action")), arr("allowed"), roomParam); err != nil {
		return nil, err
	}
	r := &Allowed{Room: b.Uint("room"), Secret: b.OptStr("secret"), Action: strings.ToLower(b.Str("action"))}
	if !slices.Contains(AllowedActions, r.Action) {
		return nil, errorf(ErrInvalid, "Unsupported action '%s' (allowed)", b.Str("action"))
	}
	// Janus reads the array for add and remove only, and without one they change nothing.
	if r.Action == "add" || r.Action == "remove" {
		r.Tokens, r.tokensErr = b.Strings("allowed", "Invalid element in the allowed array (not a string)")
	}
	return r, nil
}

// Check reports what Janus checks of an `allowed` after the room and its secret: that add's or
// remove's array holds only strings (484).
func (r *Allowed) Check() *Error { return r.tokensErr }

func parseParticipantAdmin(op string) func(plugin.Body) (Request, *Error) {
	return func(b plugin.Body) (Request, *Error) {
		if err := b.Validate(secretParam, roomParam, idParam); err != nil {
			return nil, err
		}
		return &ParticipantAdmin{Op: op, Room: b.Uint("room"), ID: b.Uint("id"), Secret: b.OptStr("secret")}, nil
	}
}

func parseRoomAdmin(op string) func(plugin.Body) (Request, *Error) {
	return func(b plugin.Body) (Request, *Error) {
		if err := b.Validate(secretParam, roomParam); err != nil {
			return nil, err
		}
		return &RoomAdmin{Op: op, Room: b.Uint("room"), Secret: b.OptStr("secret")}, nil
	}
}

var rtpForwardParams = []plugin.Param{
	str("group"), pos("ssrc"), str("codec"), pos("ptype"), need(pos("port")), need(str("host")),
	str("host_family"), pos("srtp_suite"), str("srtp_crypto"), boo("always_on"), roomParam,
	adminKey, secretParam,
}

func parseRTPForward(b plugin.Body) (Request, *Error) {
	if err := b.Validate(rtpForwardParams...); err != nil {
		return nil, err
	}
	r := &RTPForward{
		Room: b.Uint("room"), Secret: b.OptStr("secret"), AdminKey: b.OptStr("admin_key"), Group: b.OptStr("group"),
		Codec: "opus", PType: optInt(b, "ptype"), Host: b.Str("host"), HostFamily: b.Str("host_family"),
		SRTPCrypto: b.Str("srtp_crypto"), AlwaysOn: b.Bool("always_on"),
	}
	if b.Has("ssrc") {
		s := uint32(b.Uint("ssrc")) // Janus keeps the low 32 bits
		r.SSRC = &s
	}
	if c := b.OptStr("codec"); c != nil {
		r.Codec = *c
	}
	if !slices.Contains(Codecs, r.Codec) {
		return nil, errorf(ErrInvalid, "Unsupported codec (%s)", r.Codec)
	}
	// Janus stores the port in 16 bits: 0 is refused, 65536 too, and 70000 quietly becomes 4464;
	// strata refuses every port that is not one.
	if port := b.Uint("port"); port == 0 || port > 65535 {
		return nil, errorf(ErrInvalid, "Invalid port number (%d)", port)
	}
	r.Port = int(b.Uint("port"))
	if r.HostFamily != "" && r.HostFamily != "ipv4" && r.HostFamily != "ipv6" {
		return nil, errorf(ErrInvalid, "Unsupported protocol family (%s)", r.HostFamily)
	}
	// SRTP needs both; Janus ignores either one alone.
	if b.Has("srtp_suite") && b.Has("srtp_crypto") {
		r.SRTPSuite = int(min(b.Uint("srtp_suite"), 1<<31-1))
		if r.SRTPSuite != 32 && r.SRTPSuite != 80 {
			return nil, errorf(ErrInvalid, "Invalid SRTP suite (%d)", r.SRTPSuite)
		}
	} else {
		r.SRTPCrypto = ""
	}
	return r, nil
}

func parseStopRTPForward(b plugin.Body) (Request, *Error) {
	if err := b.Validate(need(pos("stream_id")), roomParam, adminKey, secretParam); err != nil {
		return nil, err
	}
	return &StopRTPForward{Room: b.Uint("room"), StreamID: b.Uint("stream_id"), Secret: b.OptStr("secret"),
		AdminKey: b.OptStr("admin_key")}, nil
}

func parsePlayFile(b plugin.Body) (Request, *Error) {
	if err := b.Validate(roomParam, need(str("filename")), str("file_id"), str("group"), boo("loop"), adminKey, secretParam); err != nil {
		return nil, err
	}
	return &PlayFile{Room: b.Uint("room"), Secret: b.OptStr("secret"), AdminKey: b.OptStr("admin_key"),
		Group: b.OptStr("group"), FileID: b.OptStr("file_id"), Filename: b.Str("filename"), Loop: b.Bool("loop")}, nil
}

func parseFileCheck(op string) func(plugin.Body) (Request, *Error) {
	return func(b plugin.Body) (Request, *Error) {
		if err := b.Validate(roomParam, need(str("file_id")), adminKey, secretParam); err != nil {
			return nil, err
		}
		return &FileCheck{Op: op, Room: b.Uint("room"), Secret: b.OptStr("secret"), AdminKey: b.OptStr("admin_key"),
			FileID: b.Str("file_id")}, nil
	}
}

func parseEnableRecording(b plugin.Body) (Request, *Error) {
	if err := b.Validate(need(boo("record")), str("record_file"), str("record_dir"), roomParam, secretParam); err != nil {
		return nil, err
	}
	return &EnableRecording{Room: b.Uint("room"), Secret: b.OptStr("secret"), Record: b.Bool("record"),
		RecordFile: b.OptStr("record_file"), RecordDir: b.OptStr("record_dir")}, nil
}

func parseEnableMJRs(b plugin.Body) (Request, *Error) {
	if err := b.Validate(need(boo("mjrs")), str("mjrs_dir"), roomParam, secretParam); err != nil {
		return nil, err
	}
	return &EnableMJRs{Room: b.Uint("room"), Secret: b.OptStr("secret"), MJRs: b.Bool("mjrs"), MJRsDir: b.OptStr("mjrs_dir")}, nil
}
