package audiobridge

import (
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

// member is one participant of one room: its input to the mix (jitter buffer and decoder), its
// listener (the encoder of what it hears), and its settings. The media it is fed from and sends
// to belong to the session (sessionMedia) and outlive a changeroom: attach and detach connect the
// two.
type member struct {
	id    uint64
	s     *session
	room  *room
	order uint64 // join order in the room
	admin bool   // joined with the room's secret: mute_room spares it
	codec media.Codec

	// In a cluster: guest is set on a room's owner for a participant whose session is on another
	// node (s is nil); seat on the participant's node while its room is mixed on another.
	guest *guest
	seat  atomic.Pointer[seat]

	in       *audio.Input
	listener *audio.Listener // used by the mixer's goroutine only (after join)
	gate     audio.Gate      // mixer's goroutine only: is the participant saying anything

	// Read by the mixer on every tick.
	muted   atomic.Bool
	volume  atomic.Int32
	pan     atomic.Int32
	setup   atomic.Bool
	group   atomic.Int32                        // 1-based index in the room's groups; 0: none
	pending atomic.Pointer[audio.EncoderConfig] // a configure's new settings, applied by the mixer
	out     atomic.Pointer[mixOut]              // where the mix goes, once the media is up

	mu       sync.Mutex // guards what follows
	display  *string
	settings Participant
	sink     *audio.Sink
	sinkRecv *sfu.Receiver       // the receiver sink is on
	levels   bool                // the audio level extension is in use: "talking" is reported
	record   bool                // the participant asked for its .mjr recording (join's or configure's record)
	filename string              // the recording's base name ("" for Janus's default)
	mjr      *record.Participant // the participant's own recording, when on
}

// newMember prepares a participant of r with the resolved settings: its decoder and encoder are
// created now, not on the mixer's goroutine.
func newMember(s *session, r *room, id uint64, set Participant, display *string) (*member, *Error) {
	f := r.format()
	codec := media.CodecByName(set.Codec)
	in, err := audio.NewCodecInput(codec, audio.Format{Rate: f.Rate, Channels: 1}, set.Prebuffer)
	if err != nil {
		return nil, errorf(ErrLibopus, "Error creating Opus decoder")
	}
	var l *audio.Listener
	switch codec {
	case media.CodecPCMU:
		l, err = audio.NewG711Listener(f, audio.ULaw)
	case media.CodecPCMA:
		l, err = audio.NewG711Listener(f, audio.ALaw)
	default:
		l, err = audio.NewListener(f, encoderConfig(set))
	}
	if err != nil {
		return nil, errorf(ErrLibopus, "Error creating Opus encoder")
	}
	m := &member{id: id, s: s, room: r, codec: codec, in: in, listener: l, display: display, settings: set,
		gate: audio.NewGate(r.p.cfg.SilenceGate, audio.DefaultGateHangover)}
	m.apply(set)
	return m, nil
}

// encoderConfig is what a participant's settings ask of the encoder of its mix.
func encoderConfig(p Participant) audio.EncoderConfig {
	return audio.EncoderConfig{
		Bitrate: p.Bitrate, Complexity: p.Quality, FEC: p.ExpectedLoss > 0, ExpectedLoss: p.ExpectedLoss,
	}
}

// apply makes settings effective: mute, volume and position at once, the encoder at the next tick.
func (m *member) apply(p Participant) {
	m.muted.Store(p.Muted)
	m.volume.Store(int32(min(p.Volume, audio.MaxVolume)))
	m.pan.Store(int32(p.SpatialPosition))
	c := encoderConfig(p)
	m.pending.Store(&c)
}

// configure applies a configure's settings (checked by Configure.Apply) and display; it reports
// whether the others must hear of it: Janus tells them whenever a configure carries muted or
// display, changed or not.
func (m *member) configure(c *Configure) (bool, *Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := c.Apply(&m.settings, &m.room.opts); err != nil {
		return false, err
	}
	if c.Display != nil {
		m.display = c.Display
	}
	if c.Record != nil {
		m.record = *c.Record
	}
	if c.Filename != nil {
		m.filename = *c.Filename
	}
	m.apply(m.settings)
	return c.Muted != nil || c.Display != nil, nil
}

// info describes m in joined, participants and listparticipants.
func (m *member) info(spatial bool) ParticipantInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := ParticipantInfo{ID: m.id, Display: m.display, Setup: m.setup.Load(), Muted: m.muted.Load()}
	if m.levels && m.sink != nil {
		t := m.sink.Talking()
		p.Talking = &t
	}
	if spatial {
		pos := int(m.pan.Load())
		p.SpatialPosition = &pos
	}
	return p
}

// attach connects m to the session's media: its packets feed m's input, the mix goes out on it.
// A seat's media goes to the room's owner instead.
func (m *member) attach(md *sessionMedia) error {
	if st := m.seatOf(); st != nil {
		return st.attach(m, md)
	}
	if err := m.attachReceiver(md.recv, int(md.pt), md.out); err != nil {
		return err
	}
	m.syncRecording()
	return nil
}

// attachReceiver feeds recv's packets of payload type pt (-1: any) to m's input and sends the
// mix to out.
func (m *member) attachReceiver(recv *sfu.Receiver, pt int, out *mixOut) error {
	m.mu.Lock()
	set := m.settings
	m.mu.Unlock()
	sink, err := audio.NewSink(recv, m.in, m.sinkConfig(set, pt))
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.sink, m.sinkRecv = sink, recv
	m.levels = recv.Config().Extensions.AudioLevel != 0
	m.mu.Unlock()
	recv.AddSink(sink)
	m.out.Store(out)
	return nil
}

// detachSink stops feeding m's input.
func (m *member) detachSink() {
	m.mu.Lock()
	sink, recv := m.sink, m.sinkRecv
	m.sink, m.sinkRecv = nil, nil
	m.mu.Unlock()
	if sink != nil {
		recv.RemoveSink(sink)
	}
}

// detach disconnects m from its media (it left the room).
func (m *member) detach() {
	m.out.Store(nil)
	m.stopRecording()
	m.detachSink()
	if m.guest != nil {
		m.guest.close(m.room.p.cl, m.room, m)
	}
	if st := m.seatOf(); st != nil {
		st.detach(m)
	}
}

func (m *member) seatOf() *seat {
	if m == nil {
		return nil
	}
	return m.seat.Load()
}

// query adds the member's state to handle_info.
func (m *member) query(q map[string]any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.display != nil {
		q["display"] = *m.display
	}
	q["muted"] = m.muted.Load()
	q["codec"] = m.settings.Codec
	q["prebuffer"] = m.settings.Prebuffer
	q["bitrate"] = m.settings.Bitrate
	q["quality"] = m.settings.Quality
	q["expected_loss"] = m.settings.ExpectedLoss
	q["volume_gain"] = m.settings.Volume
	if m.room.opts.SpatialAudio {
		q["spatial_position"] = m.settings.SpatialPosition
	}
}
