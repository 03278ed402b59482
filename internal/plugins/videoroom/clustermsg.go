package videoroom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/strata-rtc/strata/internal/media"
)

// The messages between the nodes of a room that spans nodes (cluster.go). They come from other
// nodes — remote input — so every one is decoded strictly and checked (decodeOwnerRequest,
// decodeRoomEvent) before anything acts on it.

// clusterPath is where a room's owner takes the other nodes' requests (View.Handle).
const clusterPath = "/videoroom"

// Owner requests (ownerRequest.Op).
const (
	opJoin    = "join"    // admit a participant: limits and a feed id unique across nodes
	opPublish = "publish" // may a participant start publishing (the room's publisher limit)
	opUpdate  = "update"  // a participant changed (published, unpublished, display, streams)
	opLeave   = "leave"   // a participant left
	opEvent   = "event"   // a Janus event for every other node's participants
	opSync    = "sync"    // a node re-announces its participants; the owner publishes the whole room
	opAdmin   = "admin"   // a room-level request (edit, destroy, kick, moderate, ...) run by the owner
	opRooms   = "rooms"   // the rooms a node knows (any node answers: a node that starts learns them)
	opForward = "forward" // rtp_forward, stop_rtp_forward, listforwarders on the callee's own publishers
)

// Room events on a room's topic (the Envelope's Kind), stamped with the owner's epoch.
const (
	evMember  = "member"  // one participant changed or left
	evEvent   = "event"   // a Janus event for the receiving node's participants
	evState   = "state"   // the whole room (after a re-announce, an owner change, an edit)
	evNotice  = "notice"  // an owner's decision about a participant or the room (kick, moderate, destroy)
	evCreated = "created" // on the rooms topic: a room created through the API
)

// Notice actions.
const (
	noticeKick     = "kick"
	noticeModerate = "moderate"
	noticeDestroy  = "destroy"
)

// Bounds on what another node may send: anything larger is refused, not stored.
const (
	maxWireStreams = 64
	maxWireMembers = 4096
	maxWireText    = 4096
	maxWireJSON    = 64 << 10
	maxWireRooms   = 100000
)

// wireMember is a participant as the nodes announce it.
type wireMember struct {
	ID       uint64          `json:"id"`
	Node     string          `json:"node,omitempty"`
	Display  string          `json:"display,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Active   bool            `json:"active,omitempty"`
	Streams  []wireStream    `json:"streams,omitempty"`
	Gone     bool            `json:"gone,omitempty"` // evMember: the participant left
}

// wireData is the kind of a publisher's data stream (its application m-line) among its streams.
const wireData = "data"

// wireStream is one published stream: what subscribers on other nodes are offered.
type wireStream struct {
	Mid         string `json:"mid"`
	MIndex      int    `json:"mindex"`
	Kind        string `json:"kind"`
	Codec       string `json:"codec"`
	Fmtp        string `json:"fmtp,omitempty"`
	Simulcast   bool   `json:"simulcast,omitempty"`
	SVC         bool   `json:"svc,omitempty"`
	Description string `json:"description,omitempty"`
	Moderated   bool   `json:"moderated,omitempty"`
	Talking     bool   `json:"talking,omitempty"`
}

// wireOptions are a room's options (roomOptions) between nodes.
type wireOptions struct {
	Description        string   `json:"description,omitempty"`
	Secret             string   `json:"secret,omitempty"`
	PIN                string   `json:"pin,omitempty"`
	IsPrivate          bool     `json:"is_private,omitempty"`
	Publishers         int      `json:"publishers"`
	Bitrate            int64    `json:"bitrate,omitempty"`
	BitrateCap         bool     `json:"bitrate_cap,omitempty"`
	FIRFreq            int      `json:"fir_freq,omitempty"`
	AudioCodecs        []string `json:"audiocodecs,omitempty"`
	VideoCodecs        []string `json:"videocodecs,omitempty"`
	OpusFEC            bool     `json:"opus_fec,omitempty"`
	AudioLevelEvent    bool     `json:"audiolevel_event,omitempty"`
	AudioActivePackets int      `json:"audio_active_packets,omitempty"`
	AudioLevelAverage  int      `json:"audio_level_average,omitempty"`
	NotifyJoining      bool     `json:"notify_joining,omitempty"`
	RequirePvtID       bool     `json:"require_pvtid,omitempty"`
	Record             bool     `json:"record,omitempty"`
	RecDir             string   `json:"rec_dir,omitempty"`
	LockRecord         bool     `json:"lock_record,omitempty"`
	CheckAllowed       bool     `json:"check_allowed,omitempty"`
	Allowed            []string `json:"allowed,omitempty"`
	Policy             string   `json:"policy,omitempty"`
}

// ownerRequest is a node's request to a room's owner (or, opRooms, to any node).
type ownerRequest struct {
	Op      string          `json:"op"`
	Room    uint64          `json:"room,omitempty"`
	Member  *wireMember     `json:"member,omitempty"`  // join, update, leave, publish
	Members []wireMember    `json:"members,omitempty"` // sync
	Options *wireOptions    `json:"options,omitempty"` // sync: the caller's copy, for an owner that lacks the room
	Body    json.RawMessage `json:"body,omitempty"`    // event: the Janus event; admin: the Janus request
}

// ownerAnswer is the owner's answer. A refusal carries the Janus error the client gets.
type ownerAnswer struct {
	NotOwner bool            `json:"not_owner,omitempty"` // the callee does not hold the room: ask again
	Code     int             `json:"error_code,omitempty"`
	Reason   string          `json:"error,omitempty"`
	ID       uint64          `json:"id,omitempty"`    // join: the participant's id
	Data     json.RawMessage `json:"data,omitempty"`  // admin: the request's answer
	Rooms    []wireRoom      `json:"rooms,omitempty"` // rooms
}

// wireState is a whole room, as its owner holds it: Nodes are the nodes whose participants it
// lists (those that re-announced to this owner); the participants of others stay as they were.
type wireState struct {
	Room    uint64       `json:"room"`
	Options wireOptions  `json:"options"`
	Nodes   []string     `json:"nodes"`
	Members []wireMember `json:"members"`
}

// wireNotice is an owner's decision that the nodes carry out.
type wireNotice struct {
	Action string `json:"action"`
	ID     uint64 `json:"id,omitempty"`
	Mid    string `json:"mid,omitempty"`
	Mute   bool   `json:"mute,omitempty"`
}

// wireEvent is a Janus event a node pushed to its participants, for the other nodes'.
type wireEvent struct {
	Node  string          `json:"node"` // where it happened: that node's participants had it already
	Event json.RawMessage `json:"event"`
}

// wireRoom is a room created through the API (rooms topic, opRooms).
type wireRoom struct {
	Room    uint64      `json:"room"`
	Options wireOptions `json:"options"`
}

func (a ownerAnswer) err() *requestError {
	if a.Code == 0 {
		return nil
	}
	return &requestError{code: a.Code, reason: a.Reason}
}

func refusal(e *requestError) ownerAnswer { return ownerAnswer{Code: e.code, Reason: e.reason} }

// decodeStrict decodes one JSON value, refusing unknown fields and trailing data.
func decodeStrict(raw []byte, v any) error {
	if len(raw) > maxWireJSON*4 {
		return fmt.Errorf("message of %d bytes is too large", len(raw))
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after the message")
	}
	return nil
}

// decodeOwnerRequest decodes and checks a request from another node.
func decodeOwnerRequest(raw []byte) (ownerRequest, error) {
	var req ownerRequest
	if err := decodeStrict(raw, &req); err != nil {
		return req, fmt.Errorf("videoroom cluster request: %w", err)
	}
	if err := req.check(); err != nil {
		return req, fmt.Errorf("videoroom cluster request %q: %w", req.Op, err)
	}
	return req, nil
}

func (req ownerRequest) check() error {
	if req.Op != opRooms && req.Room == 0 {
		return fmt.Errorf("no room")
	}
	switch req.Op {
	case opJoin, opPublish, opUpdate, opLeave:
		if req.Member == nil {
			return fmt.Errorf("no member")
		}
		if req.Op != opJoin && req.Member.ID == 0 {
			return fmt.Errorf("member without an id")
		}
		return req.Member.check()
	case opSync:
		if len(req.Members) > maxWireMembers {
			return fmt.Errorf("%d members", len(req.Members))
		}
		for _, m := range req.Members {
			if m.ID == 0 {
				return fmt.Errorf("member without an id")
			}
			if err := m.check(); err != nil {
				return err
			}
		}
		if req.Options != nil {
			return req.Options.check()
		}
		return nil
	case opEvent, opAdmin, opForward:
		if len(req.Body) == 0 || len(req.Body) > maxWireJSON || bytes.TrimSpace(req.Body)[0] != '{' {
			return fmt.Errorf("body is not a JSON object of at most %d bytes", maxWireJSON)
		}
		return nil
	case opRooms:
		return nil
	}
	return fmt.Errorf("unknown operation")
}

func checkText(name, s string) error {
	if len(s) > maxWireText || !utf8.ValidString(s) {
		return fmt.Errorf("%s: not UTF-8 of at most %d bytes", name, maxWireText)
	}
	return nil
}

func (m wireMember) check() error {
	if err := checkText("display", m.Display); err != nil {
		return err
	}
	if err := checkText("node", m.Node); err != nil {
		return err
	}
	if len(m.Metadata) > maxWireJSON {
		return fmt.Errorf("metadata of %d bytes", len(m.Metadata))
	}
	if len(m.Streams) > maxWireStreams {
		return fmt.Errorf("%d streams", len(m.Streams))
	}
	mids, data := map[string]bool{}, false
	for _, st := range m.Streams {
		if st.Mid == "" || mids[st.Mid] {
			return fmt.Errorf("stream mid %q empty or repeated", st.Mid)
		}
		mids[st.Mid] = true
		switch c := media.CodecByName(st.Codec); {
		case st.Kind == wireData:
			if st.Codec != "" || st.Fmtp != "" || st.Simulcast || st.SVC || data {
				return fmt.Errorf("stream %q: a data stream with a codec, or a second one", st.Mid)
			}
			data = true
		case st.Kind != "audio" && st.Kind != "video":
			return fmt.Errorf("stream %q: kind %q", st.Mid, st.Kind)
		case c.String() != st.Codec || st.Codec == "":
			return fmt.Errorf("stream %q: unknown codec %q", st.Mid, st.Codec)
		}
		if st.MIndex < 0 || st.MIndex > 1024 {
			return fmt.Errorf("stream %q: mindex %d", st.Mid, st.MIndex)
		}
		for name, s := range map[string]string{"mid": st.Mid, "fmtp": st.Fmtp, "description": st.Description} {
			if err := checkText(name, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o wireOptions) check() error {
	if len(o.AudioCodecs) > 16 || len(o.VideoCodecs) > 16 || len(o.Allowed) > maxWireMembers {
		return fmt.Errorf("options: too many codecs or allowed tokens")
	}
	for _, s := range append(append(append([]string{o.Description, o.Secret, o.PIN, o.RecDir, o.Policy}, o.AudioCodecs...), o.VideoCodecs...), o.Allowed...) {
		if err := checkText("option", s); err != nil {
			return err
		}
	}
	if o.Publishers < 0 || o.FIRFreq < 0 || o.Bitrate < 0 || o.AudioActivePackets < 0 || o.AudioLevelAverage < 0 {
		return fmt.Errorf("options: a negative number")
	}
	return nil
}

// decodeRoomEvent decodes and checks the body of a room event of kind.
func decodeRoomEvent(kind string, raw []byte) (any, error) {
	var err error
	switch kind {
	case evMember:
		var m wireMember
		if err = decodeStrict(raw, &m); err == nil {
			if m.ID == 0 || m.Node == "" {
				err = fmt.Errorf("member without an id or node")
			} else {
				err = m.check()
			}
		}
		return m, wrapEvent(kind, err)
	case evEvent:
		var ev wireEvent
		if len(raw) > maxWireJSON+maxWireText {
			err = fmt.Errorf("event of %d bytes", len(raw))
		} else if err = decodeStrict(raw, &ev); err == nil {
			var obj map[string]json.RawMessage
			if ev.Node == "" {
				err = fmt.Errorf("no node")
			} else if err = json.Unmarshal(ev.Event, &obj); err == nil && obj == nil {
				err = fmt.Errorf("not an object")
			}
		}
		return ev, wrapEvent(kind, err)
	case evState:
		var st wireState
		if err = decodeStrict(raw, &st); err == nil {
			err = st.check()
		}
		return st, wrapEvent(kind, err)
	case evNotice:
		var n wireNotice
		if err = decodeStrict(raw, &n); err == nil {
			switch n.Action {
			case noticeKick, noticeModerate:
				if n.ID == 0 {
					err = fmt.Errorf("%s without an id", n.Action)
				} else {
					err = checkText("mid", n.Mid)
				}
			case noticeDestroy:
			default:
				err = fmt.Errorf("unknown action %q", n.Action)
			}
		}
		return n, wrapEvent(kind, err)
	case evCreated:
		var r wireRoom
		if err = decodeStrict(raw, &r); err == nil {
			if r.Room == 0 {
				err = fmt.Errorf("no room")
			} else {
				err = r.Options.check()
			}
		}
		return r, wrapEvent(kind, err)
	}
	return nil, fmt.Errorf("videoroom room event: unknown kind %q", kind)
}

func (st wireState) check() error {
	if st.Room == 0 {
		return fmt.Errorf("no room")
	}
	if len(st.Members) > maxWireMembers || len(st.Nodes) > maxWireMembers {
		return fmt.Errorf("%d members, %d nodes", len(st.Members), len(st.Nodes))
	}
	for _, m := range st.Members {
		if m.ID == 0 || m.Node == "" {
			return fmt.Errorf("member without an id or node")
		}
		if err := m.check(); err != nil {
			return err
		}
	}
	return st.Options.check()
}

func wrapEvent(kind string, err error) error {
	if err != nil {
		return fmt.Errorf("videoroom room event %q: %w", kind, err)
	}
	return nil
}

// wire converts a room's options for the other nodes.
func (o roomOptions) wire() wireOptions {
	return wireOptions{
		Description: o.description, Secret: o.secret, PIN: o.pin, IsPrivate: o.isPrivate, Publishers: o.publishers,
		Bitrate: o.bitrate, BitrateCap: o.bitrateCap, FIRFreq: o.firFreq, AudioCodecs: o.audioCodecs, VideoCodecs: o.videoCodecs,
		OpusFEC: o.opusFEC, AudioLevelEvent: o.audioLevelEvent, AudioActivePackets: o.audioActivePackets,
		AudioLevelAverage: o.audioLevelAverage, NotifyJoining: o.notifyJoining, RequirePvtID: o.requirePvtID,
		Record: o.record, RecDir: o.recDir, LockRecord: o.lockRecord, CheckAllowed: o.checkAllowed, Allowed: o.allowed,
		Policy: o.policy,
	}
}

// options converts what another node sent back into a room's options (Janus's defaults filled).
func (w wireOptions) options() roomOptions {
	o := roomOptions{
		description: w.Description, secret: w.Secret, pin: w.PIN, isPrivate: w.IsPrivate, publishers: w.Publishers,
		bitrate: w.Bitrate, bitrateCap: w.BitrateCap, firFreq: w.FIRFreq, audioCodecs: w.AudioCodecs, videoCodecs: w.VideoCodecs,
		opusFEC: w.OpusFEC, audioLevelEvent: w.AudioLevelEvent, audioActivePackets: w.AudioActivePackets,
		audioLevelAverage: w.AudioLevelAverage, notifyJoining: w.NotifyJoining, requirePvtID: w.RequirePvtID,
		record: w.Record, recDir: w.RecDir, lockRecord: w.LockRecord, checkAllowed: w.CheckAllowed, allowed: w.Allowed,
		policy: w.Policy,
	}
	o.normalize()
	return o
}
