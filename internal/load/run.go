package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/load/sampler"
)

// Options are a run's settings besides the plan.
type Options struct {
	// MediaDir caches the generated clips (default mediasrc.DefaultDir()).
	MediaDir string
	// ServerPID is the server process to sample; 0 looks for the process listening on the server
	// URL's port in this network namespace.
	ServerPID int
	// ServerPIDs are the processes of the plan's Servers, in order, when it has several (a
	// cluster's nodes, each sampled and reported on its own and in total); a 0 is not sampled.
	ServerPIDs []int
	// Progress receives the progress bar (nil: none); Terminal redraws it in place.
	Progress io.Writer
	Terminal bool
	// Interval between samples (default 1 s).
	Interval time.Duration
}

// maxJoinsInFlight bounds concurrent client set-ups, so a slow server is not flooded.
const maxJoinsInFlight = 16

// run is one load run in progress.
type run struct {
	plan  plan.Plan
	opts  Options
	env   *client.Env // the home server's (plan.Home): the room, the publishers
	start time.Time
	// envs are the clients' environments, one per server of plan.ServerList (envs[0] is env);
	// apartEnv is the apart subscriber's (plan.Apart), nil without one.
	envs     []*client.Env
	apartEnv *client.Env

	mu       sync.Mutex
	pubs     []*client.Publisher   // by publisher index; nil until joined (or if it failed)
	parts    []*client.Participant // audio bridge participants, by index; nil until joined
	nParts   int
	calls    []*client.Caller     // SIP callers, by index; nil until connected
	subs     []*client.Subscriber // subscribers and streaming viewers
	expected map[*client.Subscriber]int
	serverOf map[*client.Subscriber]int // index in plan.ServerList of a subscription's server
	apart    *client.Subscriber         // the apart subscriber (plan.Apart), once joined
	feed     *client.Feed               // the plain RTP into a streaming mountpoint the run created; nil otherwise
	nPubs    int
	subCount int
	errs     []string
	failed   int

	sampler *sampling
	voice   *voiceRun // voice media and audio bridge participants; nil otherwise
	steps   *stepper  // nil without steps
}

// Run executes the plan and returns what it measured. Set-up failures (unreachable server, no
// videoroom, missing room, no media) return an error and no result. Once clients start joining,
// Run always returns a result, marked Interrupted if ctx ended early.
func Run(ctx context.Context, p plan.Plan, opts Options) (*report.Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if opts.MediaDir == "" {
		opts.MediaDir = mediasrc.DefaultDir()
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	media := &mediasrc.Media{} // voice is synthesised here, the clips come from ffmpeg
	if p.Media != plan.MediaVoice {
		var err error
		if media, err = mediasrc.Load(opts.MediaDir, layersFor(p.Media)); err != nil {
			return nil, err
		}
	}
	r := &run{plan: p, opts: opts, start: time.Now(), expected: map[*client.Subscriber]int{},
		serverOf: map[*client.Subscriber]int{},
		pubs:     make([]*client.Publisher, p.Publishers), parts: make([]*client.Participant, p.AudioBridge.Participants),
		calls: make([]*client.Caller, p.SIP.Calls)}
	var err error
	if p.Media == plan.MediaVoice {
		if r.voice, err = newVoiceRun(p); err != nil {
			return nil, err
		}
	}
	if err := r.newEnvs(media); err != nil {
		return nil, err
	}
	if r.voice != nil {
		r.env.Voice = r.voice.source
	}
	setup, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	admin, err := client.Connect(setup, r.env)
	if err != nil {
		return nil, err
	}
	defer admin.Close(context.Background())
	switch {
	case p.IsSIP(): // the callers need nothing but the plugin, which attaching checks
	case p.IsStreaming():
		if err := r.prepareMountpoint(setup, admin); err != nil {
			return nil, err
		}
		defer r.closeFeed()
	default:
		if err := r.prepareRoom(setup, admin); err != nil {
			return nil, err
		}
	}
	if p.CreateRoom && p.IsStreaming() {
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = admin.DestroyMountpoint(ctx, p.Room)
		}()
	} else if p.CreateRoom {
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = admin.Destroy(ctx, p.Room)
		}()
	}
	pids, inProcess := r.serverPIDs()
	r.sampler = newSampling(r, pids, opts)
	result := r.execute(ctx)
	result.Server.InProcess = inProcess
	return result, nil
}

func layersFor(media string) []mediasrc.Layer {
	switch media {
	case plan.MediaSimulcast:
		return mediasrc.Layers
	case plan.MediaVideo:
		return mediasrc.Layers[1:2]
	case plan.MediaHD:
		return mediasrc.Layers[:1]
	}
	return nil
}

func (r *run) prepareRoom(ctx context.Context, admin *client.Admin) error {
	exists, err := admin.Exists(ctx, r.plan.Room)
	if err != nil {
		return fmt.Errorf("room %d: %w", r.plan.Room, err)
	}
	switch {
	case exists && r.plan.CreateRoom:
		return fmt.Errorf("room %d already exists; choose another --room or drop --create-room", r.plan.Room)
	case !exists && !r.plan.CreateRoom:
		return fmt.Errorf("room %d: %w on %s (create it, or pass --create-room)", r.plan.Room, client.ErrNoRoom, r.plan.Home())
	case !exists && r.plan.IsAudioBridge():
		if err := admin.CreateAudioBridge(ctx, r.plan.Room, r.plan.AudioBridge.SamplingRate); err != nil {
			return fmt.Errorf("creating audio bridge room %d: %w", r.plan.Room, err)
		}
	case !exists:
		if err := admin.Create(ctx, r.plan.Room, r.plan.Publishers); err != nil {
			return fmt.Errorf("creating room %d: %w", r.plan.Room, err)
		}
	}
	return nil
}

// serverPIDs are the processes to sample: the plan's servers' when it has several
// (Options.ServerPIDs), or else the one given, or the one listening on the server's port.
func (r *run) serverPIDs() (pids []int, inProcess bool) {
	if n := len(r.plan.ServerList()); n > 1 {
		pids = make([]int, n)
		copy(pids, r.opts.ServerPIDs)
		if len(r.opts.ServerPIDs) != n {
			r.addErr(fmt.Errorf("%d server PIDs for %d servers: the servers without one are not sampled", len(r.opts.ServerPIDs), n))
		}
		return pids, slices.Contains(pids, os.Getpid())
	}
	pid, inProcess := r.serverPID()
	return []int{pid}, inProcess
}

// serverPID is the process to sample: the one given, or the one listening on the server's port.
func (r *run) serverPID() (pid int, inProcess bool) {
	pid = r.opts.ServerPID
	if pid == 0 {
		if u, err := url.Parse(r.plan.Home()); err == nil {
			port := u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[u.Scheme]
			}
			if n, err := net.LookupPort("tcp", port); err == nil {
				if found, err := sampler.FindPIDByPort(n); err == nil {
					pid = found
				} else {
					r.addErr(fmt.Errorf("server process not found (pass --server-pid to sample it): %w", err))
				}
			}
		}
	}
	return pid, pid == os.Getpid()
}

// execute joins everyone, holds the load, and tears down.
func (r *run) execute(ctx context.Context) *report.Result {
	r.sampler.begin()
	stopSampling := make(chan struct{})
	samplingDone := make(chan struct{})
	go func() {
		defer close(samplingDone)
		r.sampler.loop(stopSampling)
	}()
	if r.voice != nil {
		go r.voice.talk(stopSampling, r)
	}
	r.steps = newStepper(r)

	lastJoin := r.joinAll(ctx)
	if ctx.Err() == nil && !r.steps.stopped() {
		select {
		case <-ctx.Done():
		case <-time.After(r.plan.Duration):
		}
	}
	close(stopSampling)
	<-samplingDone
	r.sampler.take() // a final sample at the end of the hold
	result := r.collect(ctx.Err() != nil)
	r.steps.report(result)
	steadyFrom := lastJoin + r.plan.Warmup
	result.Finalize(steadyFrom.Seconds())
	r.sampler.finishProgress()
	r.teardown()
	return result
}

// joinAll paces the joins: audio bridge participants, or publishers (each, in a conference, also
// subscribing to the others) then subscribers; with steps, it holds the load after every step.
// It returns when the last join finished.
func (r *run) joinAll(ctx context.Context) time.Duration {
	tick := time.NewTicker(time.Duration(float64(time.Second) / r.plan.JoinRate))
	defer tick.Stop()
	slots := make(chan struct{}, maxJoinsInFlight)
	var wg sync.WaitGroup
	mesh := newMesh(r)
	joins := 0
	// pace starts job, waits for the next tick, and at the end of a step waits for the step's
	// joins and holds the load. false ends the joins (interrupted, or the server fell behind).
	pace := func(job func()) bool {
		select {
		case <-ctx.Done():
			return false
		case slots <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			job()
		}()
		joins++
		if r.steps.due(joins) {
			wg.Wait()
			return r.steps.hold(ctx)
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
			return true
		}
	}
	for i := 0; i < r.plan.AudioBridge.Participants; i++ {
		if !pace(func() { r.joinParticipant(ctx, i) }) {
			break
		}
	}
	for i := 0; i < r.plan.SIP.Calls; i++ {
		if !pace(func() { r.joinCaller(ctx, i) }) {
			break
		}
	}
	for i := 0; i < r.plan.Streaming.Viewers; i++ {
		if !pace(func() { r.joinViewer(ctx) }) {
			break
		}
	}
	for i := 0; i < r.plan.Publishers; i++ {
		if !pace(func() { r.joinPublisher(ctx, i, mesh) }) {
			break
		}
	}
	wg.Wait() // publishers' joins include their place in the mesh
	feeds := r.feedIDs()
	if len(feeds) == 0 && r.plan.Subscribers > 0 && ctx.Err() == nil && !r.steps.stopped() {
		r.addErr(errors.New("no publisher joined, so subscribers have nothing to receive"))
	}
	for i := 0; i < r.plan.Subscribers && len(feeds) > 0 && !r.steps.stopped(); i++ {
		if !pace(func() { r.joinSubscriber(ctx, i, feeds) }) {
			break
		}
	}
	wg.Wait()
	return time.Since(r.start)
}

func (r *run) joinPublisher(ctx context.Context, i int, mesh *mesh) {
	p, err := client.JoinPublisher(ctx, r.env, i)
	if err != nil {
		r.fail(err)
		return
	}
	r.mu.Lock()
	r.pubs[i] = p
	r.nPubs++
	r.mu.Unlock()
	if r.plan.PublishersSubscribe {
		mesh.joined(ctx, p)
	}
}

// joinSubscriber joins receive-only subscriber i on its server (plan.SubscriberServer).
func (r *run) joinSubscriber(ctx context.Context, i int, feeds []uint64) {
	server := r.plan.SubscriberServer(i)
	env, apart := r.envs[server], r.plan.Apart.Set() && i == r.plan.Subscribers-1
	if apart {
		env = r.apartEnv
	}
	sub, err := client.JoinSubscriber(ctx, env, r.nextSubscription(), nil, feeds)
	if err != nil {
		r.fail(err)
		return
	}
	r.mu.Lock()
	r.serverOf[sub] = server
	if apart {
		r.apart = sub
	}
	r.mu.Unlock()
	r.addSubscription(sub, len(feeds)*r.kinds())
}

// feedIDs maps the plan's chosen publishers to the feed ids of those that joined.
func (r *run) feedIDs() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []uint64
	for _, i := range r.plan.Feeds() {
		if r.pubs[i] != nil {
			ids = append(ids, r.pubs[i].ID)
		}
	}
	return ids
}

// kinds is how many streams each feed has.
func (r *run) kinds() int {
	if r.plan.Video() {
		return 2
	}
	return 1
}

func (r *run) addSubscription(sub *client.Subscriber, expected int) {
	r.mu.Lock()
	r.subs = append(r.subs, sub)
	r.expected[sub] = expected
	r.mu.Unlock()
}

func (r *run) setExpected(sub *client.Subscriber, expected int) {
	r.mu.Lock()
	r.expected[sub] = expected
	r.mu.Unlock()
}

// nextSubscription numbers subscriptions in the order they are started.
func (r *run) nextSubscription() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subCount++
	return r.subCount - 1
}

func (r *run) fail(err error) {
	r.mu.Lock()
	r.failed++
	r.mu.Unlock()
	r.addErr(err)
}

func (r *run) addErr(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err.Error())
	r.mu.Unlock()
}

// teardown closes every client, in parallel, within a bounded time.
func (r *run) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.mu.Lock()
	subs, pubs, parts, calls := r.subs, r.pubs, r.parts, r.calls
	r.mu.Unlock()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	closeAll := func(f func()) {
		sem <- struct{}{}
		wg.Add(1)
		go func() { defer wg.Done(); defer func() { <-sem }(); f() }()
	}
	for _, s := range subs {
		closeAll(func() { s.Close(ctx) })
	}
	wg.Wait()
	for _, p := range pubs {
		if p != nil {
			closeAll(func() { p.Close(ctx) })
		}
	}
	for _, p := range parts {
		if p != nil {
			closeAll(func() { p.Close(ctx) })
		}
	}
	for _, c := range calls {
		if c != nil {
			closeAll(func() { c.Close(ctx) })
		}
	}
	wg.Wait()
}
