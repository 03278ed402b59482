package recordplay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

var recordParams = []plugin.Param{
	{Name: "name", Kind: plugin.NonEmptyString, Required: true},
	{Name: "id", Kind: plugin.Positive},
	{Name: "filename", Kind: plugin.String},
	{Name: "audiocodec", Kind: plugin.String},
	{Name: "videocodec", Kind: plugin.String},
	{Name: "videoprofile", Kind: plugin.String},
	{Name: "opusred", Kind: plugin.Bool},
	{Name: "textdata", Kind: plugin.Bool},
	{Name: "update", Kind: plugin.Bool},
}

// recorder records the first audio and the first video m-line of a client's offer, each track
// through a Receiver into a record.MJR.
type recorder struct {
	s    *session
	rec  *recording
	peer *peer.Peer
	stop chan struct{}

	topRID map[string]string // mid → the highest simulcast rid the client offers to send
	// sess writes the tracks' .mjr files and, with recording.playable, one playable file of both.
	sess *record.Session

	mu     sync.Mutex // guards what follows
	tracks map[string]*recTrack
	paused bool
	ended  bool
}

// recTrack is one recorded m-line.
type recTrack struct {
	recv  *sfu.Receiver
	mjr   *record.MJR
	sink  *pausable
	video bool
	// rid is the simulcast stream recorded, the highest, as Janus records it ("" without
	// simulcast); the other layers are not.
	rid string
	fed bool // a track feeds the receiver
}

// record answers a client's offer and starts recording it.
func (s *session) record(b plugin.Body, jsep *plugin.JSEP) (map[string]any, *plugin.JSEP, *plugin.RequestError) {
	if jsep == nil || jsep.SDP == "" || jsep.Type != "offer" {
		return nil, nil, errorf(ErrMissingElement, "Missing SDP offer")
	}
	if rerr := b.Validate(recordParams...); rerr != nil {
		return nil, nil, rerr
	}
	s.mu.Lock()
	busy, recording := s.rec != nil || s.play != nil, s.rec
	s.mu.Unlock()
	if recording != nil { // a renegotiation (Janus's core marks it "update"), such as an ICE restart
		return recording.update(jsep)
	}
	if busy {
		return nil, nil, errorf(ErrInvalidState, "Already recording or playing: stop first")
	}
	rec, rerr := s.reserve(b)
	if rerr != nil {
		return nil, nil, rerr
	}
	base := rec.base
	p, err := s.h.Peer()
	if err != nil {
		s.p.lib.forget(rec)
		return nil, nil, errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	sess, err := s.p.newSession(base, s.log)
	if err != nil {
		s.p.lib.forget(rec)
		return nil, nil, errorf(ErrUnknown, "Error creating the recording: %v", err)
	}
	r := &recorder{s: s, rec: rec, peer: p, stop: make(chan struct{}), tracks: map[string]*recTrack{},
		topRID: highestRIDs(jsep.SDP, jsep.RIDOrder), sess: sess}
	prefs := codecPrefs{audio: b.Str("audiocodec"), video: b.Str("videocodec"), profile: b.Str("videoprofile")}
	p.OnTrack(r.onTrack)
	ctx, cancel := context.WithTimeout(s.q.Context(), negotiateTimeout)
	defer cancel()
	answer, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP},
		peer.BeforeLocal(func(pc *webrtc.PeerConnection) error { return r.prepare(pc, prefs, base) }))
	if err == nil && len(r.tracks) == 0 {
		err = fmt.Errorf("the offer has no audio or video to record")
	}
	if err != nil {
		r.discard()
		return nil, nil, errorf(ErrInvalidSDP, "Error parsing offer: %v", err)
	}
	s.mu.Lock()
	s.rec = r
	s.mu.Unlock()
	go r.feedback()
	return map[string]any{"status": "recording", "id": rec.ID}, &plugin.JSEP{Type: "answer", SDP: answer.SDP, E2EE: jsep.E2EE}, nil
}

// reserve checks a new recording's id and file name and enters it in the library.
func (s *session) reserve(b plugin.Body) (*recording, *plugin.RequestError) {
	base := b.Str("filename")
	if b.Has("filename") && (!plainName(base) || strings.HasPrefix(base, ".")) {
		return nil, errorf(ErrInvalidElement, "Invalid filename (a file name in the recordings directory, without a directory)")
	}
	id := b.Uint("id")
	rec, err := s.p.lib.reserve(id, nfo{Name: cleanName(b.Str("name")), Date: time.Now().Format("2006-01-02 15:04:05")}, base)
	switch {
	case errors.Is(err, errIDTaken):
		return nil, errorf(ErrRecordingExists, "Recording %d already exists", id)
	case err != nil:
		return nil, errorf(ErrInvalidState, "Another recording is writing files named %s", base)
	}
	return rec, nil
}

// update answers a new offer of a client that is recording (an ICE restart, Janus's "update"): the
// recording goes on with the tracks it has.
func (r *recorder) update(jsep *plugin.JSEP) (map[string]any, *plugin.JSEP, *plugin.RequestError) {
	ctx, cancel := context.WithTimeout(r.s.q.Context(), negotiateTimeout)
	defer cancel()
	answer, err := r.peer.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP})
	if err != nil {
		return nil, nil, errorf(ErrInvalidSDP, "Error parsing offer: %v", err)
	}
	return map[string]any{"status": "recording", "id": r.rec.ID}, &plugin.JSEP{Type: "answer", SDP: answer.SDP, E2EE: jsep.E2EE}, nil
}

// codecPrefs are the codecs a record request asks for.
type codecPrefs struct{ audio, video, profile string }

// prepare runs between applying the offer and creating the answer: the first audio and the first
// video transceiver each get one codec (the one asked for, or the client's first), a Receiver and
// a recording. Pion answers them recvonly, since strata sends nothing.
func (r *recorder) prepare(pc *webrtc.PeerConnection, prefs codecPrefs, base string) error {
	for _, t := range pc.GetTransceivers() {
		kind := t.Kind()
		video := kind == webrtc.RTPCodecTypeVideo
		if (kind != webrtc.RTPCodecTypeAudio && !video) || t.Mid() == "" || r.has(video) {
			continue
		}
		offered := t.Receiver().GetParameters()
		pref, profile := prefs.audio, ""
		if video {
			pref, profile = prefs.video, prefs.profile
		}
		chosen, ok := media.PickCodec(offered.Codecs, []string{pref}, profile)
		if !ok {
			chosen, ok = media.PickCodec(offered.Codecs, nil, "")
		}
		codec := media.CodecByName(chosen.MimeType)
		if !ok || codec == media.CodecUnknown {
			continue
		}
		if err := t.SetCodecPreferences(media.WithRTX(chosen, offered.Codecs)); err != nil {
			return fmt.Errorf("codec preferences for mid %s: %w", t.Mid(), err)
		}
		if err := r.addTrack(t.Mid(), codec, chosen.SDPFmtpLine, offered.HeaderExtensions, base); err != nil {
			return err
		}
	}
	return nil
}

func (r *recorder) has(video bool) bool {
	for _, t := range r.tracks {
		if t.video == video {
			return true
		}
	}
	return false
}

// addTrack creates the Receiver and the recording of one m-line: <base>-audio.mjr or
// <base>-video.mjr, as Janus names them, with the header extensions Janus notes in the file.
func (r *recorder) addTrack(mid string, codec media.Codec, fmtp string, exts []webrtc.RTPHeaderExtensionParameter, base string) error {
	uris := map[string]int{}
	var opts []record.Option
	for _, e := range exts {
		uris[e.URI] = e.ID
		if e.URI == sfu.AudioLevelURI && !codec.IsVideo() || e.URI == sfu.VideoOrientationURI && codec.IsVideo() {
			opts = append(opts, record.WithExtension(e.ID, e.URI))
		}
	}
	kind := "audio"
	if codec.IsVideo() {
		kind = "video"
	}
	track, err := r.sess.AddTrackAs(base+"-"+kind, codec, fmtp, opts...)
	if err != nil {
		return err
	}
	mjr := track.MJR()
	file := filepath.Base(mjr.Path())
	recv := sfu.NewReceiver(sfu.ReceiverConfig{ID: fmt.Sprintf("rec-%d/%s", r.rec.ID, kind), Codec: codec,
		Extensions: sfu.ExtIDsFrom(uris), Batcher: r.peer.Batcher()}, r.peer.RequestKeyframe)
	sink := &pausable{sink: track, mjr: mjr}
	recv.AddSink(sink)
	r.tracks[mid] = &recTrack{recv: recv, mjr: mjr, sink: sink, video: codec.IsVideo(), rid: r.topRID[mid]}
	m := medium{file: file, codec: codec, fmtp: fmtp}
	if codec.IsVideo() {
		r.rec.Video, r.rec.video = file, m
	} else {
		r.rec.Audio, r.rec.audio = file, m
	}
	return nil
}

// highestRIDs finds, per mid, the rid of the highest simulcast stream an offer sends.
func highestRIDs(offer, ridOrder string) map[string]string {
	out := map[string]string{}
	var parsed sdp.SessionDescription
	if parsed.Unmarshal([]byte(offer)) != nil {
		return out
	}
	for _, md := range parsed.MediaDescriptions {
		mid, _ := md.Attribute(sdp.AttrKeyMID)
		top := -1
		for rid, layer := range media.SimulcastLayers(media.SendRIDs(md), ridOrder) {
			if layer > top {
				top, out[mid] = layer, rid
			}
		}
	}
	return out
}

// onTrack feeds an incoming track into its m-line's Receiver.
func (r *recorder) onTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	var rt *recTrack
	for _, t := range r.peer.PC.GetTransceivers() {
		if t.Receiver() == receiver {
			r.mu.Lock()
			rt = r.tracks[t.Mid()]
			if rt != nil && (rt.fed || rt.rid != track.RID()) {
				rt = nil
			} else if rt != nil {
				rt.fed = true
			}
			r.mu.Unlock()
		}
	}
	buf := make([]byte, 1500)
	if rt != nil {
		rt.recv.SetLayerSSRC(0, uint32(track.SSRC()))
	}
	for {
		n, _, err := track.Read(buf)
		if err != nil {
			return
		}
		if rt != nil {
			rt.recv.WriteRTP(0, buf[:n], sfu.Now())
		}
	}
}

// feedback asks the browser for keyframes every video-keyframe-interval and caps its video with
// REMB every five seconds, as Janus's recorder does (faster at the start).
func (r *recorder) feedback() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var sinceREMB, sinceKeyframe time.Duration
	for i := 0; ; i++ {
		r.s.mu.Lock()
		bitrate, keyframe := r.s.bitrate, time.Duration(r.s.keyframeMs)*time.Millisecond
		r.s.mu.Unlock()
		if i < 4 || sinceREMB >= 5*time.Second {
			r.sendREMB(bitrate)
			sinceREMB = 0
		}
		if keyframe > 0 && sinceKeyframe >= keyframe {
			r.requestKeyframe()
			sinceKeyframe = 0
		}
		select {
		case <-t.C:
			sinceREMB += time.Second
			sinceKeyframe += time.Second
		case <-r.stop:
			return
		}
	}
}

func (r *recorder) sendREMB(bitrate uint32) {
	for _, t := range r.videoTracks() {
		if ssrc := t.recv.LayerSSRC(0); ssrc != 0 {
			r.peer.CapBitrate(bitrate, ssrc)
		}
	}
}

func (r *recorder) requestKeyframe() {
	for _, t := range r.videoTracks() {
		t.recv.RequestKeyframe(0, sfu.Now())
	}
}

func (r *recorder) videoTracks() []*recTrack {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*recTrack
	for _, t := range r.tracks {
		if t.video {
			out = append(out, t)
		}
	}
	return out
}

// setPaused stops (or resumes) writing the recordings. As Janus's recorder does, the pause is left
// out: after it the recording goes on as if no time had passed (its timestamps continue from where
// they stopped), so a player or janus-pp-rec jumps from before the pause to after it. A keyframe is
// asked for on resume so the video goes on decodable.
func (r *recorder) setPaused(pause bool) {
	r.mu.Lock()
	if r.paused == pause || r.ended {
		r.mu.Unlock()
		return
	}
	r.paused = pause
	now := sfu.Now()
	for _, t := range r.tracks {
		if pause {
			t.recv.RemoveSink(t.sink)
			t.sink.pausedAt = now
		} else {
			t.sink.shift.Add(int64(now - t.sink.pausedAt))
			t.sink.Resync()
			t.recv.AddSink(t.sink)
		}
	}
	r.mu.Unlock()
	if !pause {
		r.requestKeyframe()
	}
}

// pausable is a recording as its Receiver's sink: it hands the packets on with their arrival time
// moved back by the pauses so far, so the recorder, which continues its timestamps across a Resync
// by the time that passed, sees no pause. shift and pausedAt change only while the sink is removed
// from its receiver (setPaused); shift is atomic for a packet that was on its way at the removal.
type pausable struct {
	sink     sfu.Sink // the track's recording: its .mjr file and its part of the playable file
	mjr      *record.MJR
	shift    atomic.Int64 // time.Duration
	pausedAt time.Duration
}

func (p *pausable) WriteRTP(pkt *sfu.Packet) {
	at := pkt.At
	pkt.At -= time.Duration(p.shift.Load()) // the sinks of a packet run one after another: restored before the next
	p.sink.WriteRTP(pkt)
	pkt.At = at
}

func (p *pausable) Resync() { p.sink.Resync() }

// stats is what each recording wrote, by file.
func (r *recorder) stats() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]any{}
	for _, t := range r.tracks {
		st := t.mjr.Stats()
		out[filepath.Base(t.mjr.Path())] = map[string]any{"packets": st.Packets, "dropped": st.Dropped, "bytes": st.Bytes}
	}
	return out
}

// closeTracks ends the recordings; empty says which recorded no packet.
func (r *recorder) closeTracks() (empty []*recTrack) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return nil
	}
	r.ended = true
	close(r.stop)
	for _, t := range r.tracks {
		t.recv.RemoveSink(t.sink)
		t.recv.Close()
	}
	err := r.sess.Close()
	if st := r.sess.Stats(); err != nil || st.Dropped > 0 {
		r.s.log.Warn("recording closed", "id", r.rec.ID, "dropped", st.Dropped, "playable", st.Path, "err", err)
	}
	for _, t := range r.tracks {
		if t.mjr.Stats().Packets == 0 {
			empty = append(empty, t)
		}
	}
	return empty
}

// finish ends the recording and writes its .nfo, which lists it. A track that recorded nothing is
// left out of the .nfo (its file holds no packet to play), and a recording of nothing is dropped.
func (r *recorder) finish() {
	for _, t := range r.closeTracks() {
		if t.video {
			r.rec.Video = ""
		} else {
			r.rec.Audio = ""
		}
		_ = os.Remove(t.mjr.Path())
	}
	if err := r.s.p.lib.complete(r.rec); err != nil {
		r.s.log.Error("completing a recording", "id", r.rec.ID, "err", err)
	}
}

// discard ends a recording that never started.
func (r *recorder) discard() {
	for _, t := range r.closeTracks() {
		_ = os.Remove(t.mjr.Path())
	}
	r.s.p.lib.forget(r.rec)
}
