package audiobridge

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/udpbatch"
)

// period is one mixing tick: every participant's 20 ms frame in, one 20 ms packet out.
const period = audio.FrameMs * time.Millisecond

// maxBehind is how late a tick may start before the loop gives up catching up and skips ahead:
// a mix that ran behind (the machine stalled) resumes at real time instead of bursting.
const maxBehind = 5 * period

// mixLoop is a room's mixer on its own goroutine: each tick it pulls a frame from every input and
// announcement, mixes (the full mix, and the mix without each talker), encodes with the room's Plan
// (the full mix once for every listener of the same settings who contributes nothing, once per
// talker), and hands each packet to its participant's LocalSource, forwarder or recording. A tick
// allocates nothing and takes no lock of the room: it reads the roster.
type mixLoop struct {
	r     *room
	f     audio.Format
	quit  chan struct{}
	done  chan struct{}
	stats mixStats

	mixer     *audio.Mixer
	plan      *audio.Plan
	srcs      []audio.Source
	listeners []*audio.Listener
	batchers  []udpbatch.Batcher
	groups    []*groupMix // by group index; nil until a forwarder of the group exists
}

// groupMix mixes one group's participants for the forwarders of that group (rtp_forward with a
// group): the same sources with everyone outside the group left out, and a plan of its own.
type groupMix struct {
	mixer     *audio.Mixer
	plan      *audio.Plan
	srcs      []audio.Source
	listeners []*audio.Listener
}

// mixStats are counters the mixer publishes for handle_info and tests.
type mixStats struct {
	ticks, late, skipped atomic.Uint64
	encodings            atomic.Uint64
	maxLate              atomic.Int64 // ns
	errors               atomic.Uint64
}

func startMixLoop(r *room) *mixLoop {
	l, err := newMixLoop(r)
	if err != nil { // the format was validated when the room was made
		r.p.log.Error("audiobridge mixer", "room", r.id, "err", err)
		close(l.done)
		return l
	}
	go l.run()
	return l
}

func newMixLoop(r *room) (*mixLoop, error) {
	f := r.format()
	l := &mixLoop{r: r, f: f, quit: make(chan struct{}), done: make(chan struct{})}
	var err error
	if l.mixer, err = audio.NewMixer(f); err == nil {
		l.plan, err = audio.NewPlan(f, -1)
	}
	return l, err
}

// stop ends the loop and waits for it.
func (l *mixLoop) stop() {
	select {
	case <-l.quit:
	default:
		close(l.quit)
	}
	<-l.done
}

func (l *mixLoop) run() {
	defer close(l.done)
	ownThread(fmt.Sprintf("mixer %d", l.r.id))
	totals := &l.r.p.mix
	totals.running.Add(1)
	defer totals.running.Add(-1)
	start := time.Now()
	timer := time.NewTimer(period)
	defer timer.Stop()
	var tick uint64
	for {
		tick++
		due := start.Add(time.Duration(tick) * period)
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-l.quit:
				return
			case <-timer.C:
			}
		} else {
			select {
			case <-l.quit:
				return
			default:
			}
		}
		late := time.Since(due)
		if late > period {
			l.stats.late.Add(1)
			totals.late.Add(1)
		}
		if int64(late) > l.stats.maxLate.Load() {
			l.stats.maxLate.Store(int64(late))
		}
		if late > maxBehind {
			skip := uint64(late / period)
			tick += skip
			l.stats.skipped.Add(skip)
			totals.skipped.Add(skip)
		}
		began := time.Now()
		encodings := l.stats.encodings.Load()
		l.tick(tick)
		totals.ticks.Add(1)
		totals.encodings.Add(l.stats.encodings.Load() - encodings)
		totals.busy.Add(uint64(time.Since(began)))
	}
}

// tick mixes and sends one period.
func (l *mixLoop) tick(tick uint64) {
	ro := l.r.roster.Load()
	l.stats.ticks.Add(1)
	l.srcs, l.listeners = l.srcs[:0], l.listeners[:0]
	for _, m := range ro.members {
		pcm := m.in.Next()
		if pcm != nil && !m.gate.Open(pcm) {
			pcm = nil // silence: the participant hears the shared full mix
		}
		l.srcs = append(l.srcs, audio.Source{
			PCM: pcm, Channels: 1, Volume: int(m.volume.Load()), Muted: l.r.mutedFor(m), Pan: int(m.pan.Load()),
		})
		var listener *audio.Listener
		if m.out.Load() != nil {
			if c := m.pending.Swap(nil); c != nil {
				if err := m.listener.Configure(*c); err != nil {
					l.stats.errors.Add(1)
				}
			}
			listener = m.listener
		}
		l.listeners = append(l.listeners, listener)
	}
	for _, a := range ro.files {
		pcm, _ := a.next()
		l.srcs = append(l.srcs, audio.Source{PCM: pcm, Channels: l.f.Channels, Volume: 100, Pan: 50})
		l.listeners = append(l.listeners, nil)
	}
	for _, fw := range ro.forwarders {
		var listener *audio.Listener
		if fw.group == 0 {
			listener = fw.listener
		}
		l.listeners = append(l.listeners, listener)
	}
	if l.mixer.Mix(l.srcs) != nil {
		l.stats.errors.Add(1)
	}
	if l.plan.Encode(l.mixer, l.listeners) != nil {
		l.stats.errors.Add(1)
	}
	l.stats.encodings.Add(uint64(l.plan.Encodings()))
	for _, g := range ro.groups {
		l.mixGroup(ro, g)
	}
	if ro.recording != nil {
		ro.recording.write(l.mixer.Full())
	}
	l.send(ro, tick)
}

// mixGroup mixes and encodes the forwarders of group g (1-based) from the tick's sources.
func (l *mixLoop) mixGroup(ro *roster, g int) {
	for len(l.groups) < g {
		l.groups = append(l.groups, nil)
	}
	gm := l.groups[g-1]
	if gm == nil {
		mixer, err := audio.NewMixer(l.f)
		if err != nil {
			return
		}
		plan, err := audio.NewPlan(l.f, -1)
		if err != nil {
			return
		}
		gm = &groupMix{mixer: mixer, plan: plan}
		l.groups[g-1] = gm
	}
	gm.srcs, gm.listeners = append(gm.srcs[:0], l.srcs...), gm.listeners[:0]
	for i, m := range ro.members {
		if int(m.group.Load()) != g {
			gm.srcs[i].PCM = nil
		}
	}
	for range gm.srcs {
		gm.listeners = append(gm.listeners, nil)
	}
	for _, fw := range ro.forwarders {
		if fw.group == g {
			gm.listeners = append(gm.listeners, fw.listener)
		}
	}
	if gm.mixer.Mix(gm.srcs) != nil || gm.plan.Encode(gm.mixer, gm.listeners) != nil {
		l.stats.errors.Add(1)
	}
	l.stats.encodings.Add(uint64(gm.plan.Encodings()))
}

// send hands each listener its packet, holding every socket's batch so that the tick's packets
// leave together.
func (l *mixLoop) send(ro *roster, tick uint64) {
	now := sfu.Now()
	l.holdBatches(ro)
	for i, m := range ro.members {
		if l.listeners[i] == nil {
			continue
		}
		if out := m.out.Load(); out != nil {
			out.write(l.listeners[i].Packet(), tick, now)
		}
	}
	for _, fw := range ro.forwarders {
		if len(ro.members) == 0 && !fw.info.AlwaysOn {
			continue // Janus forwards an empty room's silence only when asked to
		}
		fw.out.write(fw.listener.Packet(), tick, now)
	}
	for _, b := range l.batchers {
		b.Release()
	}
}

// holdBatches holds the batch of every distinct socket the tick writes to (usually one: the
// server's shared ICE socket).
func (l *mixLoop) holdBatches(ro *roster) {
	l.batchers = l.batchers[:0]
	for _, m := range ro.members {
		out := m.out.Load()
		if out == nil {
			continue
		}
		seen := false
		for _, b := range l.batchers {
			if b == out.batcher {
				seen = true
				break
			}
		}
		if !seen {
			l.batchers = append(l.batchers, out.batcher)
			out.batcher.Hold()
		}
	}
}
