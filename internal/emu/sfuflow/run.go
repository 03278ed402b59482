package sfuflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
	count *layerCounter
	media *mediasrc.Media

	mu      sync.Mutex
	started bool
	pub     *client.Publisher
	sub     *subscriber
}

// newRun prepares a session; its clips come from media (shared by sessions with the same layers).
func newRun(s *Sessions, index int, spec scenario.SFUSession, hosts Session, media map[string]*mediasrc.Media) (*run, error) {
	var sizes [][2]int
	layers := simulcastLayers(spec.Layers)
	key := fmt.Sprint(layers)
	if media[key] == nil {
		dir := s.env.MediaDir
		if dir == "" {
			dir = mediasrc.DefaultDir()
		}
		m, err := mediasrc.LoadRates(dir, layers) // encodes clips at new rates once (ffmpeg)
		if err != nil {
			return nil, fmt.Errorf("sfuflow: session %s: %w", spec.Name, err)
		}
		media[key] = m
	}
	for i := len(layers) - 1; i >= 0; i-- { // base first
		sizes = append(sizes, [2]int{layers[i].Width, layers[i].Height})
	}
	return &run{s: s, index: index, spec: spec, hosts: hosts, count: newLayerCounter(sizes), media: media[key]}, nil
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
	subNet, err := newHostNet(r.hosts.Sub)
	if err != nil {
		return fmt.Errorf("subscriber host: %w", err)
	}
	api, err := subscriberAPI(subNet)
	if err != nil {
		return err
	}
	r.sub = &subscriber{count: r.count, rec: r.hosts.Rec, now: env.Clock.Now}
	jctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	opaque := receiverNode(r.spec) + "-" + r.spec.Name
	if err := subscribe(jctx, api, hostHTTP(r.hosts.Sub), r.s.server, r.s.room, r.pub.ID, videoMid, opaque, r.sub); err != nil {
		return fmt.Errorf("subscriber: %w", err)
	}
	fmt.Fprintf(env.Log, "sfuflow: session %s up at %v (feed %d)\n", r.spec.Name, env.Clock.Now().Round(time.Millisecond), r.pub.ID)
	return nil
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
