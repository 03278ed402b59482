package videoroom

import (
	"context"
	"encoding/json"
	"sort"
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// publisher is a participant of a room: it joined with ptype "publisher" and may publish streams.
type publisher struct {
	s         *session
	room      *room
	id        uint64
	privateID uint32
	// node is the node holding a participant of another node (s is nil then), and remote what
	// this node imports of its feed (clustermember.go); "" and nil for this node's participants.
	node   string
	remote *remoteFeed

	mu           sync.Mutex
	display      string
	metadata     json.RawMessage
	peer         *peer.Peer
	streams      []*pubStream
	data         *pubData // the data stream (data.go), nil without one
	active       bool     // the PeerConnection is up: others can subscribe
	bitrate      int64
	forwarders   map[uint32]*forwarder
	activePkts   int
	levelAvg     int
	descriptions map[string]string

	// recMu guards the recording state (recording.go); taken before mu, never inside it.
	recMu           sync.Mutex
	recording       bool         // Janus's recording_active
	recBase         string       // Janus's recording_base: the request's filename
	recordedStreams []*pubStream // the streams with a recording
	recPart         *record.Participant
	recName         string // the base of its files
}

// pubStream is one published m-line.
type pubStream struct {
	mid       string
	mindex    int
	kind      string
	codecName string
	fmtp      string
	pt        uint8 // the payload type negotiated with the publisher
	simulcast bool
	svc       bool
	rids      map[string]int
	layers    []ssrcLayer // SSRC simulcast, lowest first (nil otherwise)
	recv      *sfu.Receiver
	rec       *record.SessionTrack // guarded by the publisher's recMu

	mu          sync.Mutex
	description string
	moderated   bool
	talking     bool
	// readers are the tracks read into each layer: one per layer, since the receiver takes a
	// layer's packets from one goroutine at a time.
	readers [policy.MaxSpatial]*webrtc.TrackRemote
}

func (st *pubStream) describe() map[string]any {
	st.mu.Lock()
	defer st.mu.Unlock()
	d := map[string]any{"type": st.kind, "mindex": st.mindex, "mid": st.mid, "codec": st.codecName}
	if st.description != "" {
		d["description"] = st.description
	}
	if st.moderated {
		d["moderated"] = true
	}
	if st.simulcast {
		d["simulcast"] = true
	}
	if st.svc {
		d["svc"] = true
	}
	if st.kind == "audio" {
		d["talking"] = st.talking
	}
	return d
}

// identity is the participant as joining/attendees events show it.
func (pub *publisher) identity() map[string]any {
	pub.mu.Lock()
	defer pub.mu.Unlock()
	d := map[string]any{"id": pub.id}
	if pub.display != "" {
		d["display"] = pub.display
	}
	if len(pub.metadata) > 0 {
		d["metadata"] = pub.metadata
	}
	return d
}

// describe is the publisher as joined/publishers events show it.
func (pub *publisher) describe() map[string]any {
	d := pub.identity()
	var streams []map[string]any
	talking := false
	for _, st := range pub.streamList() {
		e := st.describe()
		streams = append(streams, e)
		if st.kind == "audio" && d["audio_codec"] == nil {
			d["audio_codec"] = st.codecName
		}
		if st.kind == "video" && d["video_codec"] == nil {
			d["video_codec"] = st.codecName
		}
		if t, ok := e["talking"].(bool); ok && t {
			talking = true
		}
	}
	streams = withData(streams, pub.dataStream())
	if streams == nil {
		streams = []map[string]any{}
	}
	d["streams"] = streams
	d["talking"] = talking
	return d
}

func (pub *publisher) streamList() []*pubStream {
	pub.mu.Lock()
	defer pub.mu.Unlock()
	return append([]*pubStream(nil), pub.streams...)
}

func (pub *publisher) stream(mid string) *pubStream {
	for _, st := range pub.streamList() {
		if st.mid == mid {
			return st
		}
	}
	return nil
}

func (pub *publisher) isActive() bool {
	pub.mu.Lock()
	defer pub.mu.Unlock()
	return pub.active && pub.publishedLocked()
}

// publishedLocked: the publisher has streams, media or data; pub.mu is held.
func (pub *publisher) publishedLocked() bool { return len(pub.streams) > 0 || pub.data != nil }

func (pub *publisher) isTalking() bool {
	for _, st := range pub.streamList() {
		st.mu.Lock()
		t := st.talking
		st.mu.Unlock()
		if t {
			return true
		}
	}
	return false
}

// moderate mutes or unmutes a published stream for everyone; false if there is no such stream.
func (pub *publisher) moderate(mid string, mute bool) bool {
	st := pub.stream(mid)
	if st == nil {
		return false
	}
	st.mu.Lock()
	st.moderated = mute
	st.mu.Unlock()
	if pub.node == "" { // another node's feed is muted where it is published
		st.recv.SetMuted(mute)
	}
	return true
}

// joinPublisher handles join (and joinandconfigure) with ptype publisher.
func (s *session) joinPublisher(ctx context.Context, tx string, b body, jsep *plugin.JSEP, configure bool) *requestError {
	id, err := b.room()
	if err != nil {
		return err
	}
	r, err := s.p.room(id)
	if err != nil {
		return err
	}
	o := r.options()
	if err := b.checkSecret("pin", o.pin); err != nil {
		return err
	}
	if o.checkAllowed {
		token, _, err := b.str("token", false)
		if err != nil {
			return err
		}
		if !contains(o.allowed, token) {
			return errorf(ErrUnauthorized, "Unauthorized (not in the allowed list)")
		}
	}
	display, _, err := b.str("display", false)
	if err != nil {
		return err
	}
	userID, given, err := b.uint("id", false)
	if err != nil {
		return err
	}
	pub := &publisher{s: s, room: r, privateID: plugin.RandomUint32(), display: display, forwarders: map[uint32]*forwarder{},
		activePkts: o.audioActivePackets, levelAvg: o.audioLevelAverage}
	if md, ok := b["metadata"]; ok {
		pub.metadata = md
	}
	if err := s.p.admit(ctx, r, pub, userID, given); err != nil {
		return err
	}
	s.setPublisher(pub)
	joined := map[string]any{short: "joined", "room": r.id, "description": o.description, "id": pub.id,
		"private_id": pub.privateID, "publishers": r.publisherList(pub)}
	if o.notifyJoining {
		joined["attendees"] = r.attendees(pub)
		r.notify(map[string]any{short: "event", "room": r.id, "joining": pub.identity()}, pub)
	}
	if !configure {
		s.push(tx, joined, nil)
		return nil
	}
	answer, err := pub.configure(ctx, b, jsep, false)
	if err != nil {
		return err
	}
	s.push(tx, joined, answer)
	return nil
}

// configure applies a publisher's publish/configure request; with an offer it (re)negotiates.
// publish=true refuses to renegotiate an existing publication (Janus's publish semantics).
func (pub *publisher) configure(ctx context.Context, b body, jsep *plugin.JSEP, publish bool) (*plugin.JSEP, *requestError) {
	rs, err := pub.parseRecord(b)
	if err != nil {
		return nil, err
	}
	if err := pub.applySettings(b); err != nil {
		return nil, err
	}
	pub.applyRecord(rs)
	if jsep == nil || jsep.SDP == "" {
		if publish {
			return nil, errorf(ErrMissingElement, "Missing SDP offer")
		}
		return nil, nil
	}
	if jsep.Type != "offer" {
		return nil, errorf(ErrInvalidSDPType, "Unsupported SDP type '%s'", jsep.Type)
	}
	pub.mu.Lock()
	published := pub.publishedLocked()
	pub.mu.Unlock()
	if publish && published {
		return nil, errorf(ErrAlreadyPublished, "Can't publish, already published")
	}
	if !published {
		if n, max := pub.room.activePublishers(), pub.room.options().publishers; n >= max {
			return nil, errorf(ErrPublishersFull, "Maximum number of publishers (%d) reached", max)
		}
		if err := pub.s.p.mayPublish(ctx, pub); err != nil {
			return nil, err
		}
	}
	prefs := codecPrefs{}
	if prefs.audio, _, err = b.str("audiocodec", false); err != nil {
		return nil, err
	}
	if prefs.video, _, err = b.str("videocodec", false); err != nil {
		return nil, err
	}
	answer, err := pub.negotiate(ctx, jsep, prefs)
	if err == nil {
		pub.recordIfWanted()
	}
	return answer, err
}

// applySettings handles the non-SDP parts of publish/configure.
func (pub *publisher) applySettings(b body) *requestError {
	display, hasDisplay, err := b.str("display", false)
	if err != nil {
		return err
	}
	bitrate, hasBitrate, err := b.uint("bitrate", false)
	if err != nil {
		return err
	}
	keyframe, _, err := b.boolean("keyframe")
	if err != nil {
		return err
	}
	descs, _, err := b.list("descriptions", false)
	if err != nil {
		return err
	}
	streams, _, err := b.list("streams", false)
	if err != nil {
		return err
	}
	pub.mu.Lock()
	if hasDisplay {
		pub.display = display
	}
	if hasBitrate && !(pub.room.options().bitrateCap && pub.room.options().bitrate > 0 && int64(bitrate) > pub.room.options().bitrate) {
		pub.bitrate = int64(min(bitrate, 1<<40))
	}
	if md, ok := b["metadata"]; ok {
		pub.metadata = md
	}
	if pub.descriptions == nil {
		pub.descriptions = map[string]string{}
	}
	for _, d := range descs {
		mid, _, _ := d.str("mid", false)
		text, _, _ := d.str("description", false)
		pub.descriptions[mid] = text
	}
	pub.mu.Unlock()
	for _, st := range pub.streamList() {
		st.mu.Lock()
		if text, ok := pub.descriptions[st.mid]; ok {
			st.description = text
		}
		st.mu.Unlock()
		if keyframe {
			st.requestKeyframes()
		}
	}
	for _, sb := range streams {
		mid, _, err := sb.str("mid", true)
		if err != nil {
			return err
		}
		st := pub.stream(mid)
		if st == nil {
			return errorf(ErrNoSuchFeed, "No such mid '%s' in the publisher", mid)
		}
		if kf, _, _ := sb.boolean("keyframe"); kf {
			st.requestKeyframes()
		}
		if send, ok, err := sb.boolean("send"); err != nil {
			return err
		} else if ok {
			st.mu.Lock()
			moderated := st.moderated
			st.mu.Unlock()
			st.recv.SetMuted(!send || moderated)
		}
	}
	if c := pub.s.p.cl; c != nil {
		c.announce(pub)
	}
	return nil
}

func (st *pubStream) requestKeyframes() {
	if st.recv == nil {
		return
	}
	for l := 0; l < 3; l++ {
		if st.recv.LayerSSRC(l) != 0 {
			st.recv.RequestKeyframe(l, sfu.Now())
		}
	}
}

// configuredEvent is the answer to publish/configure.
func (pub *publisher) configuredEvent() map[string]any {
	ev := map[string]any{short: "event", "room": pub.room.id, "configured": "ok"}
	var streams []map[string]any
	for _, st := range pub.streamList() {
		streams = append(streams, st.describe())
		key := st.kind + "_codec"
		if _, ok := ev[key]; !ok {
			ev[key] = st.codecName
		}
	}
	if streams = withData(streams, pub.dataStream()); streams != nil {
		ev["streams"] = streams
	}
	return ev
}

// unpublish tears the publication down: the PeerConnection closes and MediaClosed cleans up.
func (pub *publisher) unpublish() *requestError {
	pub.mu.Lock()
	published := pub.publishedLocked()
	pub.mu.Unlock()
	if !published {
		return errorf(ErrNotPublished, "Can't unpublish, not published")
	}
	pub.s.h.ClosePeer("unpublish")
	pub.stopMedia()
	return nil
}

// stopMedia ends the publication (idempotent): receivers and forwarders close, subscribers lose
// the streams, the room hears "unpublished".
func (pub *publisher) stopMedia() {
	pub.stopRecording()
	pub.mu.Lock()
	streams := pub.streams
	published := pub.publishedLocked()
	wasActive := pub.active && published
	pub.streams, pub.active, pub.peer = nil, false, nil
	fwds := pub.forwarders
	pub.forwarders = map[uint32]*forwarder{}
	pub.mu.Unlock()
	for _, f := range fwds {
		f.close()
	}
	for _, st := range streams {
		st.recv.Close()
	}
	pub.stopData()
	if !published {
		return
	}
	if c := pub.s.p.cl; c != nil {
		c.unexport(pub)
		c.announce(pub)
	}
	pub.s.p.dropFeed(pub)
	if wasActive {
		pub.room.notify(map[string]any{short: "event", "room": pub.room.id, "unpublished": pub.id}, pub)
	}
}

// leave removes the participant from the room.
func (pub *publisher) leave() {
	r := pub.room
	r.mu.Lock()
	_, member := r.participants[pub.id]
	delete(r.participants, pub.id)
	r.mu.Unlock()
	if !member {
		return
	}
	if c := pub.s.p.cl; c != nil {
		c.left(pub)
	}
	pub.stopMedia()
	ev := map[string]any{short: "event", "room": r.id, "leaving": pub.id}
	if d := pub.identity()["display"]; d != nil {
		ev["display"] = d
	}
	r.notify(ev, pub)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func sortedMids(streams []*pubStream) []*pubStream {
	out := append([]*pubStream(nil), streams...)
	sort.Slice(out, func(i, j int) bool { return out[i].mindex < out[j].mindex })
	return out
}
