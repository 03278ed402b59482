package videoroom

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/config"
)

// roomOptions are Janus's room options.
type roomOptions struct {
	description        string
	secret, pin        string
	isPrivate          bool
	publishers         int
	bitrate            int64
	bitrateCap         bool
	firFreq            int
	audioCodecs        []string
	videoCodecs        []string
	opusFEC            bool
	audioLevelEvent    bool
	audioActivePackets int
	audioLevelAverage  int
	notifyJoining      bool
	requirePvtID       bool
	record             bool
	recDir             string
	lockRecord         bool
	checkAllowed       bool
	allowed            []string
	// policy is the room's layer policy (strata extension); empty: the configured default.
	policy string
}

func optionsFromConfig(r config.VideoRoomRoom) roomOptions {
	o := roomOptions{
		description: r.Description, secret: r.Secret, pin: r.PIN, isPrivate: r.IsPrivate,
		publishers: r.Publishers, bitrate: r.Bitrate, bitrateCap: r.BitrateCap, firFreq: r.FIRFreq,
		audioCodecs: codecList(r.AudioCodec), videoCodecs: codecList(r.VideoCodec), opusFEC: r.OpusFEC,
		audioLevelEvent: r.AudioLevelEvent, audioActivePackets: r.AudioActivePackets,
		audioLevelAverage: r.AudioLevelAverage, notifyJoining: r.NotifyJoining, requirePvtID: r.RequirePvtID,
		record: r.Record, recDir: r.RecDir, lockRecord: r.LockRecord, policy: r.Policy,
	}
	o.normalize()
	return o
}

// normalize fills Janus's defaults.
func (o *roomOptions) normalize() {
	if o.publishers <= 0 {
		o.publishers = 3
	}
	if len(o.audioCodecs) == 0 {
		o.audioCodecs = []string{"opus"}
	}
	if len(o.videoCodecs) == 0 {
		o.videoCodecs = []string{"vp8"}
	}
	if o.audioActivePackets <= 0 {
		o.audioActivePackets = 100
	}
	if o.audioLevelAverage <= 0 {
		o.audioLevelAverage = 25
	}
}

// room is one video room: its options and its participants (publishers, active or not).
// Subscribers are not participants, as in Janus.
type room struct {
	id uint64

	mu           sync.Mutex
	opts         roomOptions
	participants map[uint64]*publisher
	// remote are the participants other nodes hold (cluster.go): a copy of what they announce,
	// with no session here. participants and remote never share an id.
	remote map[uint64]*publisher
	// subscriptions counts the subscriber handles joined (plugins.videoroom.limits).
	subscriptions int
	destroyed     bool

	// cl follows the room across the cluster (cluster.go); nil with one node.
	cl atomic.Pointer[clusterRoom]
}

func newRoom(id uint64, o roomOptions) *room {
	return &room{id: id, opts: o, participants: map[uint64]*publisher{}, remote: map[uint64]*publisher{}}
}

func (r *room) options() roomOptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.opts
	o.audioCodecs = slices.Clone(o.audioCodecs)
	o.videoCodecs = slices.Clone(o.videoCodecs)
	o.allowed = slices.Clone(o.allowed)
	return o
}

// members returns the participants this node holds (those with a session here).
func (r *room) members() []*publisher {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortByID(slices.Collect(maps.Values(r.participants)))
}

// everyone returns the participants of every node: what lists and joined events show.
func (r *room) everyone() []*publisher {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Collect(maps.Values(r.participants))
	return sortByID(append(out, slices.Collect(maps.Values(r.remote))...))
}

// size counts the participants of every node.
func (r *room) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.participants) + len(r.remote)
}

// takenLocked reports whether a participant of any node has id; r.mu is held.
func (r *room) takenLocked(id uint64) bool {
	return r.participants[id] != nil || r.remote[id] != nil
}

func sortByID(out []*publisher) []*publisher {
	slices.SortFunc(out, func(a, b *publisher) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	return out
}

// participant finds a participant of any node.
func (r *room) participant(id uint64) *publisher {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.participants[id]; p != nil {
		return p
	}
	return r.remote[id]
}

// byPrivateID finds the participant owning a private id.
func (r *room) byPrivateID(pvt uint32) *publisher {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.participants {
		if p.privateID == pvt {
			return p
		}
	}
	return nil
}

// addSubscription takes one of the room's subscription slots (limit 0: unlimited); the
// subscriber gives it back with removeSubscription when it closes.
func (r *room) addSubscription(limit int) *requestError {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.destroyed {
		return errorf(ErrNoSuchRoom, "No such room (%d)", r.id)
	}
	if limit > 0 && r.subscriptions >= limit {
		return errorf(ErrPublishersFull, "Maximum number of subscriptions (%d) reached (plugins.videoroom.limits.subscriptions_per_room)", limit)
	}
	r.subscriptions++
	return nil
}

func (r *room) removeSubscription() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subscriptions--
}

// activePublishers counts participants of every node that publish media.
func (r *room) activePublishers() int {
	n := 0
	for _, p := range r.everyone() {
		if p.isActive() {
			n++
		}
	}
	return n
}

// notify pushes an event to every participant except skip, those of the other nodes included.
func (r *room) notify(data map[string]any, skip *publisher) {
	for _, p := range r.members() {
		if p != skip {
			p.s.push("", data, nil)
		}
	}
	if cr := r.cl.Load(); cr != nil {
		cr.forward(data)
	}
}

// notifyHere pushes an event to every participant of this node.
func (r *room) notifyHere(data any) {
	for _, p := range r.members() {
		p.s.push("", data, nil)
	}
}

// listEntry is the room as `list` describes it.
func (r *room) listEntry() map[string]any {
	o := r.options()
	n := r.size()
	return map[string]any{
		"room": r.id, "description": o.description, "pin_required": o.pin != "", "is_private": o.isPrivate,
		"max_publishers": o.publishers, "bitrate": o.bitrate, "bitrate_cap": o.bitrateCap, "fir_freq": o.firFreq,
		"require_pvtid": o.requirePvtID, "require_e2ee": false, "dummy_publisher": false,
		"notify_joining": o.notifyJoining, "audiocodec": joinCodecs(o.audioCodecs), "videocodec": joinCodecs(o.videoCodecs),
		"opus_fec": o.opusFEC, "record": o.record, "rec_dir": o.recDir, "lock_record": o.lockRecord,
		"num_participants": n, "audiolevel_ext": true, "audiolevel_event": o.audioLevelEvent,
		"audio_active_packets": o.audioActivePackets, "audio_level_average": o.audioLevelAverage,
		"videoorient_ext": true, "playoutdelay_ext": true, "transport_wide_cc_ext": true,
		"layer_policy": o.policy,
	}
}

func joinCodecs(cs []string) string {
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += ","
		}
		out += c
	}
	return out
}

// publisherList describes the active publishers (except skip) as joined/publishers events do.
func (r *room) publisherList(skip *publisher) []map[string]any {
	out := []map[string]any{}
	for _, p := range r.everyone() {
		if p != skip && p.isActive() {
			out = append(out, p.describe())
		}
	}
	return out
}

// attendees lists participants that do not publish (notify_joining rooms).
func (r *room) attendees(skip *publisher) []map[string]any {
	out := []map[string]any{}
	for _, p := range r.everyone() {
		if p != skip && !p.isActive() {
			out = append(out, p.identity())
		}
	}
	return out
}
