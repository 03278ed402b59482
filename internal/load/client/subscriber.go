package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// Subscriber is one multistream subscription: a PeerConnection receiving every stream of a set of
// feeds. Feeds can be added later (the videoroom's "subscribe" request and a renegotiation).
type Subscriber struct {
	// Index numbers subscriptions; Owner is the publisher index that owns it, or -1.
	Index int
	Owner int

	env       *Env
	c         *janusclient.Client // nil when sharing a publisher's connection
	s         *janusclient.Session
	h         *janusclient.Handle
	pc        *webrtc.PeerConnection
	tap       *tap // a light receiver's; nil for a full one
	privateID uint64
	// start is the request that carries the answer: the videoroom's start with the room, or the
	// streaming plugin's bare start. fromOffer registers the streams from the offer's m-lines,
	// for a plugin whose events do not list them (the streaming plugin's watch).
	start     map[string]any
	fromOffer bool

	// neg serializes signalling: the join, later subscriptions, and offers the server sends on its
	// own (a feed left).
	neg     sync.Mutex
	mu      sync.Mutex
	streams map[string]*Stream // by mid
	order   []*Stream
	errs    []error

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// JoinSubscriber subscribes to every stream of feeds and waits until the PeerConnection is up.
// With owner (a publisher) it attaches a handle in the publisher's session and passes its
// private_id, as a conference participant does; without, it has its own connection and session.
func JoinSubscriber(ctx context.Context, env *Env, index int, owner *Publisher, feeds []uint64) (*Subscriber, error) {
	ctx, cancel := context.WithTimeout(ctx, env.JoinTimeout)
	defer cancel()
	sub := newSubscriber(env, index)
	sub.start = map[string]any{"request": "start", "room": env.Room}
	if err := sub.join(ctx, owner, feeds); err != nil {
		sub.Close(context.Background())
		return nil, fmt.Errorf("subscriber %d: %w", index, err)
	}
	return sub, nil
}

func newSubscriber(env *Env, index int) *Subscriber {
	return &Subscriber{Index: index, Owner: -1, env: env, streams: map[string]*Stream{}, stop: make(chan struct{})}
}

func (sub *Subscriber) join(ctx context.Context, owner *Publisher, feeds []uint64) error {
	var err error
	if owner != nil {
		sub.Owner, sub.s, sub.privateID = owner.Index, owner.Session(), owner.PrivateID
	} else {
		if sub.c, err = sub.env.Dial(ctx); err != nil {
			return err
		}
		if sub.s, err = sub.c.Create(ctx); err != nil {
			return err
		}
	}
	if sub.h, err = sub.s.Attach(ctx, Plugin); err != nil {
		return err
	}
	states, err := sub.newPC()
	if err != nil {
		return err
	}
	body := map[string]any{"request": "join", "ptype": "subscriber", "room": sub.env.Room, "streams": feedEntries(feeds)}
	if sub.privateID != 0 {
		body["private_id"] = sub.privateID
	}
	sub.neg.Lock()
	err = sub.negotiate(ctx, body)
	sub.neg.Unlock()
	if err != nil {
		return err
	}
	if err := waitConnected(ctx, states); err != nil {
		return err
	}
	if sub.env.Substream >= 0 {
		if err := sub.chooseSubstream(ctx); err != nil {
			return err
		}
	}
	sub.wg.Add(1)
	go sub.serverOffers()
	return nil
}

// newPC creates the subscription's PeerConnection, light or full as the Env says.
func (sub *Subscriber) newPC() (<-chan webrtc.PeerConnectionState, error) {
	var states <-chan webrtc.PeerConnectionState
	var err error
	if sub.env.Light {
		sub.pc, states, sub.tap, err = sub.env.newLightPC()
	} else {
		sub.pc, states, err = sub.env.newPC()
	}
	if err != nil {
		return nil, err
	}
	sub.pc.OnTrack(sub.onTrack)
	if sub.tap != nil {
		sub.env.feedback.add(sub.tap, sub.pc.WriteRTCP)
	}
	return states, nil
}

func feedEntries(feeds []uint64) []map[string]any {
	out := make([]map[string]any, len(feeds))
	for i, f := range feeds {
		out[i] = map[string]any{"feed": f}
	}
	return out
}

// negotiate sends a request whose answer carries an offer (join, subscribe), answers it with
// "start", and registers the streams it lists. The caller holds neg.
func (sub *Subscriber) negotiate(ctx context.Context, body map[string]any) error {
	requested := sub.env.Now()
	ev, err := sub.h.Message(ctx, body, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", body["request"], err)
	}
	return sub.answer(ctx, ev, requested)
}

// answer registers the streams an event describes and, when it carries an offer, answers it.
func (sub *Subscriber) answer(ctx context.Context, ev *janusclient.Event, requested time.Duration) error {
	var d struct {
		Streams []struct {
			Type   string `json:"type"`
			Mid    string `json:"mid"`
			FeedID uint64 `json:"feed_id"`
			Active *bool  `json:"active"`
		} `json:"streams"`
	}
	_ = ev.DecodeData(&d)
	sub.mu.Lock()
	for _, st := range d.Streams {
		if st.Type != "audio" && st.Type != "video" || st.Active != nil && !*st.Active {
			continue
		}
		if _, ok := sub.streams[st.Mid]; !ok {
			sub.addStreamLocked(st.Mid, st.FeedID, st.Type, requested)
		}
	}
	sub.mu.Unlock()
	if ev.JSEP == nil {
		return nil
	}
	if ev.JSEP.Type != "offer" {
		return fmt.Errorf("expected an offer, got %q", ev.JSEP.Type)
	}
	if err := sub.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: ev.JSEP.SDP}); err != nil {
		return fmt.Errorf("offer: %w", err)
	}
	if sub.fromOffer {
		sub.addOfferedStreams(requested)
	}
	answer, err := sub.pc.CreateAnswer(nil)
	if err != nil {
		return err
	}
	jsep, err := localDescription(ctx, sub.pc, answer)
	if err != nil {
		return err
	}
	if sub.tap != nil {
		sub.tap.setTWCC(extmapID(jsep.SDP, sdp.TransportCCURI))
	}
	if _, err := sub.h.Message(ctx, sub.start, jsep); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}

// addOfferedStreams registers every audio and video stream the offer sends.
func (sub *Subscriber) addOfferedStreams(requested time.Duration) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for _, t := range sub.pc.GetTransceivers() {
		kind := t.Kind()
		if t.Mid() == "" || kind != webrtc.RTPCodecTypeAudio && kind != webrtc.RTPCodecTypeVideo || t.Direction() != webrtc.RTPTransceiverDirectionRecvonly {
			continue
		}
		if _, ok := sub.streams[t.Mid()]; !ok {
			sub.addStreamLocked(t.Mid(), 0, kind.String(), requested)
		}
	}
}

// Add subscribes to more feeds (a renegotiation).
func (sub *Subscriber) Add(ctx context.Context, feeds []uint64) error {
	ctx, cancel := context.WithTimeout(ctx, sub.env.JoinTimeout)
	defer cancel()
	sub.neg.Lock()
	defer sub.neg.Unlock()
	err := sub.negotiate(ctx, map[string]any{"request": "subscribe", "streams": feedEntries(feeds)})
	if err == nil && sub.env.Substream >= 0 {
		err = sub.chooseSubstream(ctx)
	}
	if err != nil {
		sub.recordErr(err)
	}
	return err
}

// chooseSubstream asks for the configured simulcast layer on every video stream.
func (sub *Subscriber) chooseSubstream(ctx context.Context) error {
	var entries []map[string]any
	sub.mu.Lock()
	for _, st := range sub.order {
		if st.Kind == "video" {
			entries = append(entries, map[string]any{"mid": st.Mid, "substream": sub.env.Substream})
		}
	}
	sub.mu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	if _, err := sub.h.Message(ctx, map[string]any{"request": "configure", "streams": entries}, nil); err != nil {
		return fmt.Errorf("configure substream: %w", err)
	}
	return nil
}

// serverOffers answers offers the server sends on its own (for instance when a feed leaves).
func (sub *Subscriber) serverOffers() {
	defer sub.wg.Done()
	for {
		select {
		case <-sub.stop:
			return
		case ev, ok := <-sub.h.Events():
			if !ok {
				return
			}
			if ev.JSEP == nil || ev.JSEP.Type != "offer" {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), sub.env.JoinTimeout)
			sub.neg.Lock()
			if err := sub.answer(ctx, ev, sub.env.Now()); err != nil {
				sub.recordErr(err)
			}
			sub.neg.Unlock()
			cancel()
		}
	}
}

func (sub *Subscriber) recordErr(err error) {
	sub.mu.Lock()
	sub.errs = append(sub.errs, err)
	sub.mu.Unlock()
}

// Errors returns what went wrong after the join (failed renegotiations).
func (sub *Subscriber) Errors() []error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return append([]error(nil), sub.errs...)
}

// Close destroys the subscription on the server and closes the PeerConnection.
func (sub *Subscriber) Close(ctx context.Context) {
	sub.once.Do(func() {
		close(sub.stop)
		if sub.tap != nil {
			sub.env.feedback.remove(sub.tap)
		}
		var errs []error
		switch {
		case sub.c != nil && sub.s != nil:
			errs = append(errs, sub.s.Destroy(ctx))
		case sub.h != nil:
			errs = append(errs, sub.h.Detach(ctx))
		}
		if sub.pc != nil {
			errs = append(errs, sub.pc.Close())
		}
		if sub.c != nil {
			errs = append(errs, sub.c.Close())
		}
		_ = errors.Join(errs...) // the server may already be gone
		sub.wg.Wait()
	})
}

// onTrack starts counting a received track's packets.
func (sub *Subscriber) onTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	mid := ""
	for _, t := range sub.pc.GetTransceivers() {
		if t.Receiver() == receiver {
			mid = t.Mid()
			break
		}
	}
	sub.mu.Lock()
	st := sub.streams[mid]
	if st == nil { // a stream the server did not describe: count it anyway
		st = sub.addStreamLocked(mid, 0, track.Kind().String(), sub.env.Now())
	}
	sub.mu.Unlock()
	if sub.tap == nil {
		ReadTrack(&sub.wg, track, receiver, func(pkt []byte) { st.observe(pkt, sub.env.Now()) })
		return
	}
	sub.tap.register(uint32(track.SSRC()), st)
	readLightTrack(&sub.wg, track, receiver, st, sub.env.Now)
}

// Swallowed is how many packets a light receiver counted at its socket without Pion; reads and
// datagrams are its socket's recvmmsg calls and the datagrams they returned.
func (sub *Subscriber) Swallowed() (swallowed, reads, datagrams uint64) {
	if sub.tap == nil {
		return 0, 0, 0
	}
	return sub.tap.swallowed.Load(), sub.tap.reads.Load(), sub.tap.datagrams.Load()
}

func (sub *Subscriber) addStreamLocked(mid string, feed uint64, kind string, requested time.Duration) *Stream {
	cfg := rtpstats.Config{Kind: rtpstats.Audio, ClockRate: 48000}
	if kind == "video" {
		cfg = rtpstats.Config{Kind: rtpstats.Video, ClockRate: 90000}
	}
	st := &Stream{Mid: mid, Feed: feed, Kind: kind, stats: rtpstats.New(cfg, requested), light: lightState{overhead: -1}}
	sub.streams[mid] = st
	sub.order = append(sub.order, st)
	return st
}

// Streams returns the subscription's streams in the order they were added.
func (sub *Subscriber) Streams() []*Stream {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return append([]*Stream(nil), sub.order...)
}
