package gcc

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// probeController decides when to probe, following libwebrtc's ProbeController:
//
//   - at start, two clusters at 3× and 6× the start rate, then, while the resulting estimate
//     exceeds 0.7× the last probe rate, another at 2× the new estimate (exponential probing);
//     waiting for a result gives up after 1 s;
//   - while application-limited, a probe at 2× the estimate every 5 s;
//   - after the estimate fell below 0.66× its value within the last 5 s while (or up to 3 s after)
//     being application-limited, one recovery probe at 0.85× the old value once the delay
//     detector recovers;
//   - on demand, when the application asks for more (RequestProbe).
//
// Every probe is capped by MaxProbeRate and MaxRate.
type probeController struct {
	cfg *Config

	phase         probePhase
	nextID        int
	queue         [probeQueueLen]cc.ProbeCluster
	queued, head  int
	recent        [probeQueueLen]cc.ProbeCluster // issued clusters, for the result estimator
	recentNext    int
	minFurther    float64
	lastInitiated time.Duration
	estimate      float64
	dropFrom      float64
	dropAt        time.Duration
	hasDrop       bool
}

type probePhase int8

const (
	probeInit probePhase = iota
	probeWaiting
	probeDone
)

var probePhaseNames = [...]string{"init", "waiting", "done"}

const (
	probeQueueLen      = 8
	probeResultTimeout = time.Second
	largeDropRatio     = 0.66
	largeDropWindow    = 5 * time.Second
	recoveryProbeRatio = 0.85
	alrEndedRecently   = 3 * time.Second
)

func newProbeController(cfg *Config) probeController {
	return probeController{cfg: cfg, nextID: 1, estimate: cfg.InitialRate.Bps()}
}

// start issues the initial exponential probes.
func (p *probeController) start(now time.Duration) {
	if !p.cfg.Probing || p.phase != probeInit {
		return
	}
	start := p.cfg.InitialRate.Bps()
	p.initiate(now, true, start*p.cfg.ProbeScales[0], start*p.cfg.ProbeScales[1])
}

func (p *probeController) maxProbe() float64 {
	return math.Min(p.cfg.MaxProbeRate.Bps(), p.cfg.MaxRate.Bps())
}

func (p *probeController) initiate(now time.Duration, further bool, rates ...float64) {
	last := 0.0
	for _, r := range rates {
		if r >= p.maxProbe() {
			// A probe capped at the maximum cannot be followed by a higher one: as in
			// libwebrtc, capping ends further probing (otherwise every estimate update at the
			// cap would re-arm another probe at the same rate).
			r, further = p.maxProbe(), false
		}
		if !finite(r) || r <= 0 || r <= last {
			continue
		}
		p.enqueue(r)
		last = r
	}
	p.lastInitiated = now
	if further && last > 0 {
		p.phase = probeWaiting
		p.minFurther = last * p.cfg.ProbeFurtherThreshold
	} else {
		p.phase = probeDone
	}
}

func (p *probeController) enqueue(bps float64) {
	rate := cc.BitrateFromFloat(bps)
	c := cc.ProbeCluster{
		ID:         p.nextID,
		Rate:       rate,
		MinPackets: p.cfg.ProbeMinPackets,
		MinBytes:   rate.BytesIn(p.cfg.ProbeDuration),
	}
	p.nextID++
	if p.queued == probeQueueLen {
		p.head = (p.head + 1) % probeQueueLen
		p.queued--
	}
	p.queue[(p.head+p.queued)%probeQueueLen] = c
	p.queued++
	p.recent[p.recentNext] = c
	p.recentNext = (p.recentNext + 1) % probeQueueLen
}

// next hands out the oldest pending cluster.
func (p *probeController) next() (cc.ProbeCluster, bool) {
	if p.queued == 0 {
		return cc.ProbeCluster{}, false
	}
	c := p.queue[p.head]
	p.head = (p.head + 1) % probeQueueLen
	p.queued--
	return c, true
}

// cluster finds an issued cluster by ID.
func (p *probeController) cluster(id int) (cc.ProbeCluster, bool) {
	for _, c := range p.recent {
		if c.ID == id && id != 0 {
			return c, true
		}
	}
	return cc.ProbeCluster{}, false
}

// setEstimate tells the controller the new target; it may trigger further probing.
func (p *probeController) setEstimate(now time.Duration, bps float64) {
	if p.phase == probeWaiting && bps > p.minFurther && p.queued == 0 {
		p.initiate(now, true, bps*p.cfg.ProbeFurtherScale)
	}
	if bps < largeDropRatio*p.estimate {
		p.dropFrom, p.dropAt, p.hasDrop = p.estimate, now, true
	}
	p.estimate = bps
}

// process runs the timers: giving up on a result, and periodic probes in ALR.
func (p *probeController) process(now time.Duration, alr *alrDetector) {
	if now-p.lastInitiated > probeResultTimeout && p.phase == probeWaiting {
		p.phase = probeDone
	}
	if !p.cfg.Probing || !p.cfg.ALRProbing || p.phase != probeDone || !alr.inALR {
		return
	}
	due := max(alr.started, p.lastInitiated) + p.cfg.ALRProbeInterval
	if now >= due {
		p.initiate(now, true, p.estimate*p.cfg.ALRProbeScale)
	}
}

// recover issues the recovery probe after a large drop, if one is due.
func (p *probeController) recover(now time.Duration, alr *alrDetector) {
	if !p.cfg.Probing || p.phase != probeDone || !p.hasDrop || now-p.dropAt > largeDropWindow {
		return
	}
	recentALR := alr.inALR || (alr.everEnded && now-alr.ended < alrEndedRecently)
	if !recentALR {
		return
	}
	target := recoveryProbeRatio * p.dropFrom
	if target > p.estimate {
		p.hasDrop = false
		p.initiate(now, false, target)
	}
}

// request probes at rate on the application's demand.
func (p *probeController) request(now time.Duration, bps float64) {
	if p.cfg.Probing && bps > p.estimate {
		p.initiate(now, false, bps)
	}
}
