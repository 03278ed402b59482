package audiobridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// The owner protocol's messages. They come from other nodes (or anyone who can reach the cluster
// listener or publish in Redis): remote input, decoded strictly and checked before use.

// Operations a seat's node asks of a room's owner.
const (
	opJoin      = "join"      // admit a participant: the owner's answer is the join's (or changeroom's) reply
	opConfigure = "configure" // a participant's settings and display
	opSetup     = "setup"     // its PeerConnection is up (or down)
	opMedia     = "media"     // its audio is exported: import it, export its mix
	opLeave     = "leave"     // it left
	opRequest   = "request"   // a synchronous request about the room (listparticipants, kick...)
	opSync      = "sync"      // every seat of the node in the room (a new owner, lost events)
	opReset     = "reset"     // resetdecoder: the participant's decoder is the owner's
)

// Kinds of the owner's events on the room's topic.
const (
	kindEvent = "event" // a Janus event for the room's participants
	kindDrop  = "drop"  // a participant was taken out of the room by the owner (kick)
	// kindRoster is a new owner's list of the room's participants, once the nodes re-announced
	// theirs: those missing have left.
	kindRoster = "roster"
)

// maxSeats bounds a sync's seats (and so a room's participants from one node).
const maxSeats = 4096

type ownerRequest struct {
	Op   string `json:"op"`
	Room uint64 `json:"room"`
	ID   uint64 `json:"id,omitempty"`
	// Join is a join's request (opJoin; the seats of opSync have theirs).
	Join *Join `json:"join,omitempty"`
	// ChangeRoom: the join is a changeroom's (Janus's defaults and reply differ).
	ChangeRoom bool       `json:"changeroom,omitempty"`
	Configure  *Configure `json:"configure,omitempty"`
	Setup      bool       `json:"setup,omitempty"`
	// Body is a synchronous request as the participant sent it (opRequest).
	Body  json.RawMessage `json:"body,omitempty"`
	Seats []wireSeat      `json:"seats,omitempty"`
}

// wireSeat is a participant of the asking node, re-announced to a (new) owner.
type wireSeat struct {
	Join        Join        `json:"join"` // with the participant's id, display and settings now
	Participant Participant `json:"participant"`
	Admin       bool        `json:"admin,omitempty"`
	Setup       bool        `json:"setup,omitempty"`
	// Media: its audio is exported (the owner imports it and exports the mix).
	Media bool `json:"media,omitempty"`
}

type ownerAnswer struct {
	// NotOwner: the node does not mix the room (any more): ask its owner again.
	NotOwner bool `json:"not_owner,omitempty"`
	// Code and Reason are a Janus error for the participant.
	Code   int    `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Node is the owner that answered (where the mixes are exported).
	Node string `json:"node,omitempty"`
	// Data is the reply for the participant (join's "joined", a synchronous request's answer).
	Data json.RawMessage `json:"data,omitempty"`
	// Participant and Admin are what join resolved.
	Participant *Participant `json:"participant,omitempty"`
	Admin       bool         `json:"admin,omitempty"`
	// Rooms answers opRooms.
	Rooms []wireRoom `json:"rooms,omitempty"`
}

func failed(err *Error) ownerAnswer { return ownerAnswer{Code: err.Code, Reason: err.Reason} }

// roomEvent is a Janus event of the room for every participant but Except (0: none).
type roomEvent struct {
	Room   uint64          `json:"room"`
	Except uint64          `json:"except,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// dropEvent takes participant ID of node Node out of the room: Data is pushed to it first (when
// any) and Close hangs its PeerConnection up.
type dropEvent struct {
	Room  uint64          `json:"room"`
	Node  string          `json:"node"`
	ID    uint64          `json:"id"`
	Data  json.RawMessage `json:"data,omitempty"`
	Close bool            `json:"close,omitempty"`
}

// rosterEvent lists a room's participants.
type rosterEvent struct {
	Room uint64   `json:"room"`
	IDs  []uint64 `json:"ids"`
}

var errNoRoom = errors.New("no room")

// decodeOwnerRequest reads and checks an owner protocol request.
func decodeOwnerRequest(raw []byte) (ownerRequest, error) {
	var req ownerRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return req, fmt.Errorf("audiobridge owner request: %w", err)
	}
	if req.Room == 0 && req.Op != opRooms {
		return req, fmt.Errorf("audiobridge owner request %q: %w", req.Op, errNoRoom)
	}
	switch req.Op {
	case opJoin:
		if req.Join == nil {
			return req, fmt.Errorf("audiobridge owner request join: no join")
		}
		if err := req.Join.Settings.check(); err != nil {
			return req, fmt.Errorf("audiobridge owner request join: %w", err)
		}
	case opConfigure:
		if req.Configure == nil || req.ID == 0 {
			return req, fmt.Errorf("audiobridge owner request configure: no participant or settings")
		}
		if err := req.Configure.Settings.check(); err != nil {
			return req, fmt.Errorf("audiobridge owner request configure: %w", err)
		}
	case opSetup, opMedia, opLeave, opReset:
		if req.ID == 0 {
			return req, fmt.Errorf("audiobridge owner request %s: no participant", req.Op)
		}
	case opRequest:
		var body map[string]json.RawMessage
		if json.Unmarshal(req.Body, &body) != nil {
			return req, fmt.Errorf("audiobridge owner request: the forwarded request is not an object")
		}
	case opSync:
		if len(req.Seats) > maxSeats {
			return req, fmt.Errorf("audiobridge owner request sync: %d seats exceed %d", len(req.Seats), maxSeats)
		}
		for _, s := range req.Seats {
			if s.Join.ID == 0 {
				return req, fmt.Errorf("audiobridge owner request sync: a seat without an id")
			}
			if err := s.Participant.check(); err != nil {
				return req, fmt.Errorf("audiobridge owner request sync: seat %d: %w", s.Join.ID, err)
			}
		}
	case opRooms:
	default:
		return req, fmt.Errorf("audiobridge owner request: unknown op %q", req.Op)
	}
	return req, nil
}

func decodeRoomEvent(raw []byte) (roomEvent, error) {
	var ev roomEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, fmt.Errorf("audiobridge room event: %w", err)
	}
	var data map[string]json.RawMessage
	if ev.Room == 0 || json.Unmarshal(ev.Data, &data) != nil {
		return ev, fmt.Errorf("audiobridge room event: no room or no event object")
	}
	return ev, nil
}

func decodeDropEvent(raw []byte) (dropEvent, error) {
	var ev dropEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, fmt.Errorf("audiobridge drop event: %w", err)
	}
	if ev.Room == 0 || ev.ID == 0 || ev.Node == "" {
		return ev, fmt.Errorf("audiobridge drop event: no room, participant or node")
	}
	if len(ev.Data) > 0 {
		var data map[string]json.RawMessage
		if json.Unmarshal(ev.Data, &data) != nil {
			return ev, fmt.Errorf("audiobridge drop event: the event is not an object")
		}
	}
	return ev, nil
}

// check refuses what a participant's request could not carry: the parser admits only positive
// numbers (the value checks of join and configure come later, as in Janus).
func (s Settings) check() error {
	for name, v := range map[string]*int{"prebuffer": s.Prebuffer, "bitrate": s.Bitrate, "quality": s.Quality,
		"expected_loss": s.ExpectedLoss, "volume": s.Volume, "spatial_position": s.SpatialPosition,
		"audio_level_average": s.AudioLevelAverage, "audio_active_packets": s.AudioActivePackets} {
		if v != nil && *v < 0 {
			return fmt.Errorf("negative %s", name)
		}
	}
	return nil
}

// check refuses resolved settings that join could not have resolved.
func (p Participant) check() error {
	switch {
	case !slices.Contains(Codecs, p.Codec):
		return fmt.Errorf("unknown codec %q", p.Codec)
	case p.Prebuffer < 0 || p.Prebuffer > MaxPrebuffering:
		return fmt.Errorf("prebuffer %d outside 0-%d", p.Prebuffer, MaxPrebuffering)
	case p.Bitrate != 0 && (p.Bitrate < MinOpusBitrate || p.Bitrate > MaxOpusBitrate):
		return fmt.Errorf("bitrate %d outside %d-%d", p.Bitrate, MinOpusBitrate, MaxOpusBitrate)
	case p.Quality < 1 || p.Quality > 10:
		return fmt.Errorf("quality %d outside 1-10", p.Quality)
	case p.ExpectedLoss < 0 || p.ExpectedLoss > MaxExpectedLoss:
		return fmt.Errorf("expected loss %d outside 0-%d", p.ExpectedLoss, MaxExpectedLoss)
	case p.Volume < 0 || p.SpatialPosition < 0 || p.SpatialPosition > 100 || p.AudioLevelAverage < 0 || p.AudioActivePackets < 0:
		return fmt.Errorf("volume, position or talk detection out of range")
	}
	return nil
}

func decodeRosterEvent(raw []byte) (rosterEvent, error) {
	var ev rosterEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, fmt.Errorf("audiobridge roster event: %w", err)
	}
	if ev.Room == 0 {
		return ev, fmt.Errorf("audiobridge roster event: no room")
	}
	return ev, nil
}
