package audiobridge

// The plugindata of replies and events, shaped as Janus 1.1.2 sends them (compared with the captures
// in testdata/janus-1.1.2 by TestRepliesMatchJanusCaptures). Audiobridge is the "audiobridge" tag:
// "success", "created", "event", "joined", ... Optional members are pointers: Janus omits them
// rather than sending a zero value.

// ParticipantInfo is a participant in joined, participants and listparticipants.
type ParticipantInfo struct {
	ID      uint64  `json:"id"`
	Display *string `json:"display,omitempty"`
	// Setup is whether the participant's media is up (PeerConnection, or first plain-RTP packet).
	Setup bool `json:"setup"`
	Muted bool `json:"muted"`
	// Talking is present when the participant's audio level extension is in use.
	Talking *bool `json:"talking,omitempty"`
	// SpatialPosition is present in spatial rooms.
	SpatialPosition *int `json:"spatial_position,omitempty"`
}

// RoomInfo is a room in list's reply.
type RoomInfo struct {
	Room            uint64 `json:"room"`
	Description     string `json:"description"`
	SamplingRate    int    `json:"sampling_rate"`
	SpatialAudio    bool   `json:"spatial_audio"`
	PINRequired     bool   `json:"pin_required"`
	Record          bool   `json:"record"`
	Muted           bool   `json:"muted"`
	NumParticipants int    `json:"num_participants"`
}

// ForwarderInfo is a forwarder in listforwarders' reply.
type ForwarderInfo struct {
	StreamID uint32  `json:"stream_id"`
	Group    *string `json:"group,omitempty"`
	IP       string  `json:"ip"`
	Port     int     `json:"port"`
	SSRC     uint32  `json:"ssrc"`
	Codec    string  `json:"codec"`
	PType    int     `json:"ptype"`
	SRTP     *bool   `json:"srtp,omitempty"`
	AlwaysOn bool    `json:"always_on"`
}

// RTPInfo is joined's "rtp": where the plugin expects a plain-RTP participant's media.
type RTPInfo struct {
	IP          string `json:"ip"`
	Port        int    `json:"port"`
	PayloadType int    `json:"payload_type"`
}

// Tag is a reply without members: {"audiobridge":"success"} (kick, kick_all, resetdecoder, a mute
// that changed nothing) or {"audiobridge":"hangingup"}.
type Tag struct {
	Audiobridge string `json:"audiobridge"`
}

// RoomReply is {"audiobridge":T,"room":R} with "permanent" for created, edited and destroyed
// replies; without it for the destroyed event and the success of mute, unmute, (un)mute_room.
type RoomReply struct {
	Audiobridge string `json:"audiobridge"`
	Room        uint64 `json:"room"`
	Permanent   *bool  `json:"permanent,omitempty"`
}

// ExistsReply answers exists.
type ExistsReply struct {
	Audiobridge string `json:"audiobridge"`
	Room        uint64 `json:"room"`
	Exists      bool   `json:"exists"`
}

// ListReply answers list; the member is "list", not the documented "rooms".
type ListReply struct {
	Audiobridge string     `json:"audiobridge"`
	List        []RoomInfo `json:"list"`
}

// AllowedReply answers allowed's enable, add and remove (disable answers a RoomReply).
type AllowedReply struct {
	Audiobridge string   `json:"audiobridge"`
	Room        uint64   `json:"room"`
	Allowed     []string `json:"allowed"`
}

// RecordingReply answers enable_recording ({"audiobridge":"success","record":B}) and enable_mjrs
// ("mjrs").
type RecordingReply struct {
	Audiobridge string `json:"audiobridge"`
	Record      *bool  `json:"record,omitempty"`
	MJRs        *bool  `json:"mjrs,omitempty"`
}

// FileReply answers play_file, stop_file and is_playing (with Playing), and is the
// announcement-started and announcement-stopped events.
type FileReply struct {
	Audiobridge string `json:"audiobridge"`
	Room        uint64 `json:"room"`
	FileID      string `json:"file_id"`
	Playing     *bool  `json:"playing,omitempty"`
}

// ForwardReply answers rtp_forward (with Host and Port) and stop_rtp_forward (without).
type ForwardReply struct {
	Audiobridge string  `json:"audiobridge"`
	Room        uint64  `json:"room"`
	Group       *string `json:"group,omitempty"`
	StreamID    uint32  `json:"stream_id"`
	Host        string  `json:"host,omitempty"`
	Port        int     `json:"port,omitempty"`
}

// ForwardersReply answers listforwarders.
type ForwardersReply struct {
	Audiobridge string          `json:"audiobridge"`
	Room        uint64          `json:"room"`
	Forwarders  []ForwarderInfo `json:"rtp_forwarders"`
}

// Participants is {"audiobridge":T,"room":R,"participants":[...]}: the reply to listparticipants
// (T "participants"), the joined notification to the others (T "joined", one participant), and the
// event when a participant changes (T "event": mute, display, setup).
type Participants struct {
	Audiobridge  string            `json:"audiobridge"`
	Room         uint64            `json:"room"`
	Participants []ParticipantInfo `json:"participants"`
}

// Joined is the joiner's joined event, and changeroom's roomchanged.
type Joined struct {
	Audiobridge  string            `json:"audiobridge"`
	Room         uint64            `json:"room"`
	ID           uint64            `json:"id"`
	Participants []ParticipantInfo `json:"participants"`
	RTP          *RTPInfo          `json:"rtp,omitempty"`
}

// IDEvent is {"audiobridge":T,"room":R,"id":I}: the leaver's left, and talking and
// stopped-talking.
type IDEvent struct {
	Audiobridge string `json:"audiobridge"`
	Room        uint64 `json:"room"`
	ID          uint64 `json:"id"`
}

// RoomEvent is {"audiobridge":"event","room":R,...} with one of: leaving (to the others), kicked
// (to all), kicked_all (to each, its own id), muted (mute_room, unmute_room).
type RoomEvent struct {
	Audiobridge string  `json:"audiobridge"`
	Room        uint64  `json:"room"`
	Leaving     *uint64 `json:"leaving,omitempty"`
	Kicked      *uint64 `json:"kicked,omitempty"`
	KickedAll   *uint64 `json:"kicked_all,omitempty"`
	Muted       *bool   `json:"muted,omitempty"`
}

// Result is configure's {"audiobridge":"event","result":"ok"} (with the answer as JSEP when it
// carried an offer).
type Result struct {
	Audiobridge string `json:"audiobridge"`
	Result      string `json:"result"`
}
