package sfuflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/emu/browser"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

// joinTimeout bounds a publisher's or subscriber's join (signalling, ICE, DTLS).
const joinTimeout = 15 * time.Second

// videoMid is the publisher's video m-line: the load publisher adds its audio track first.
const videoMid = "1"

// run is one session: its publisher and subscriber.
type run struct {
	s     *Sessions
	index int
	spec  scenario.SFUSession
	hosts Session
	count counter
	media *mediasrc.Media
	// linkCounts: the session's per-layer losses came from the downlink's DSCP counts (said once).
	linkCounts atomic.Bool

	mu      sync.Mutex
	started bool
	pub     *client.Publisher
	sub     interface{ close() error }
	// feed is the publisher's feed id (0 before it joined; kept after it left), switchDropped
	// the packets of each layer the switches dropped for its stream, as last read.
	feed          uint64
	switchDropped [3]int64
}

// newRun prepares a session; its clips come from media (shared by sessions with the same layers).
func newRun(s *Sessions, index int, spec scenario.SFUSession, hosts Session, media map[string]*mediasrc.Media) (*run, error) {
	if spec.Subscriber == "" { // a session built in code rather than parsed
		spec.Subscriber = scenario.SubscriberPion
	}
	dir := s.env.MediaDir
	if dir == "" {
		dir = mediasrc.DefaultDir()
	}
	r := &run{s: s, index: index, spec: spec, hosts: hosts}
	if spec.Layering == scenario.LayeringTemporal {
		return r, r.loadTemporal(dir, media)
	}
	var sizes [][2]int
	layers := simulcastLayers(spec.Layers)
	key := fmt.Sprint(layers)
	if media[key] == nil {
		m, err := mediasrc.LoadRates(dir, layers) // encodes clips at new rates once (ffmpeg)
		if err != nil {
			return nil, fmt.Errorf("sfuflow: session %s: %w", spec.Name, err)
		}
		media[key] = m
	}
	r.media = media[key]
	for i := len(layers) - 1; i >= 0; i-- { // base first
		sizes = append(sizes, [2]int{layers[i].Width, layers[i].Height})
	}
	if spec.Subscriber == scenario.SubscriberBrowser {
		r.count = newSampleCounter(sizes)
	} else {
		r.count = newLayerCounter(sizes)
	}
	return r, nil
}

// loadTemporal prepares a temporal-layered session: one 1280x720 VP8 stream of as many temporal
// layers as the session has layer rates (TL0, TL1, TL2 at those rates), counted per TID by a Pion
// subscriber. A session of fewer than three layers sends those of a three-layer clip (encoded
// with libvpx once per rates; the layers it lacks at seed 000's rates): the sender offers only
// them.
func (r *run) loadTemporal(dir string, media map[string]*mediasrc.Media) error {
	spec := r.spec
	if len(spec.Layers) < 1 || len(spec.Layers) > 3 || spec.Subscriber != scenario.SubscriberPion {
		return fmt.Errorf("sfuflow: session %s: temporal layering needs one to three layers and a pion subscriber", spec.Name)
	}
	t := mediasrc.SeedTemporal
	sum := 0
	for i := range t.Kbps {
		rate := t.Kbps[i] - sum // seed 000's rate of a layer the session lacks
		if i < len(spec.Layers) {
			rate = int(spec.Layers[i]/1000 + 0.5)
		}
		sum += rate
		t.Kbps[i] = sum
	}
	key := fmt.Sprint(t)
	if media[key] == nil {
		m, err := mediasrc.LoadTemporal(dir, t)
		if err != nil {
			return fmt.Errorf("sfuflow: session %s: %w", spec.Name, err)
		}
		media[key] = m
	}
	clip, err := media[key].Video[0].Thinned(len(spec.Layers))
	if err != nil {
		return err
	}
	r.media = &mediasrc.Media{Video: []*mediasrc.VideoClip{clip}, Audio: media[key].Audio}
	r.count = newTIDCounter(len(spec.Layers))
	return nil
}

// start joins the publisher, then the subscriber to its video.
func (r *run) start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return nil
	}
	r.started = true
	env := r.s.env
	pubNet, err := newHostNet(r.hosts.Pub)
	if err != nil {
		return fmt.Errorf("publisher host: %w", err)
	}
	cenv, err := client.NewEnv(client.Config{Server: r.s.server, Room: r.s.room, Media: r.media, Substream: -1,
		JoinTimeout: joinTimeout, Now: env.Clock.Now, Net: pubNet, HTTP: hostHTTP(r.hosts.Pub)})
	if err != nil {
		return err
	}
	if r.pub, err = client.JoinPublisher(ctx, cenv, r.index+1); err != nil {
		return err
	}
	r.feed = r.pub.ID
	if err := r.startSubscriber(ctx); err != nil {
		return fmt.Errorf("%s subscriber: %w", r.spec.Subscriber, err)
	}
	fmt.Fprintf(env.Log, "sfuflow: session %s up at %v (feed %d, %s subscriber)\n", r.spec.Name,
		env.Clock.Now().Round(time.Millisecond), r.pub.ID, r.spec.Subscriber)
	return nil
}

// startSubscriber joins the session's subscriber (Pion, or Chromium) to the publisher's video,
// with the receiver's node and the session's name as its handle's opaque_id (netctl maps it to
// the node).
func (r *run) startSubscriber(ctx context.Context) error {
	env := r.s.env
	opaque := receiverNode(r.spec) + "-" + r.spec.Name
	if r.spec.Subscriber == scenario.SubscriberBrowser {
		sub := &browserSubscriber{count: r.count.(*sampleCounter), rec: r.hosts.Rec, now: env.Clock.Now, log: env.Log,
			who: r.spec.Name + "/subscriber"}
		r.sub = sub // closed by stop, also when it failed half-way
		return sub.start(ctx, browser.LaunchConfig{Who: sub.who, Chromium: env.Chromium, Host: r.hosts.Sub,
			WorkDir: r.s.dir, Log: env.Log}, joinSpec{Server: r.s.server, Room: r.s.room, Feed: r.pub.ID, Mid: videoMid,
			Opaque: opaque}, env.Interval)
	}
	subNet, err := newHostNet(r.hosts.Sub)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	api, err := subscriberAPI(subNet)
	if err != nil {
		return err
	}
	sub := &subscriber{count: r.count.(packetCounter), rec: r.hosts.Rec, now: env.Clock.Now}
	r.sub = sub
	jctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	return subscribe(jctx, api, hostHTTP(r.hosts.Sub), r.s.server, r.s.room, r.pub.ID, videoMid, opaque, sub)
}

// stop ends the subscriber and the publisher; safe to call twice.
func (r *run) stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	if r.sub != nil {
		errs = append(errs, r.sub.close())
		r.sub = nil
	}
	if r.pub != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		r.pub.Close(ctx)
		cancel()
		r.pub = nil
	}
	return errors.Join(errs...)
}

// receiverNode is the last node of the session's path.
func receiverNode(ss scenario.SFUSession) string { return ss.Path[len(ss.Path)-1] }
