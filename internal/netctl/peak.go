package netctl

import (
	"slices"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// peakHold remembers a stream's layer rates as the SFU reported them over the last window. With a
// media reservation the controller allocates and meters layers at these peaks. The SFU measures
// each layer over about a second and reports it again when it moves by more than 10 %, and real
// video's rate follows its content: a busy scene lifts every layer for seconds, and sessions
// playing alike content peak together. Layers granted in a quiet scene then overrun the
// reservation in the next busy one, a meter sized for the quiet scene has let TCP fill the link,
// and the drop-tail queue behind the switch overflows (seed 000's experiment 3, docs/RESULTS.md).
type peakHold struct {
	samples []rateSample // oldest first; the last is the current rates
}

type rateSample struct {
	at    time.Duration
	rates []cc.Bitrate
}

// observe records the current rates at now (a new sample only when they changed) and forgets
// samples that ended more than window ago.
func (p *peakHold) observe(now, window time.Duration, rates []cc.Bitrate) {
	if n := len(p.samples); n > 0 && len(p.samples[n-1].rates) != len(rates) {
		// Another ladder (the SFU measured a layer more or less): the old peaks are of other layers.
		p.samples = p.samples[:0]
	}
	if n := len(p.samples); n == 0 || !slices.Equal(p.samples[n-1].rates, rates) {
		p.samples = append(p.samples, rateSample{at: now, rates: slices.Clone(rates)})
	}
	// Sample i held until sample i+1 arrived: drop it once that is more than window ago.
	drop := 0
	for drop+1 < len(p.samples) && now-p.samples[drop+1].at > window {
		drop++
	}
	p.samples = slices.Delete(p.samples, 0, drop)
}

// observePeaks records every stream's rates and works out its peaks, where a reservation makes
// them count (usePeaks).
func (c *Controller) observePeaks(now time.Duration) {
	if !c.usePeaks() {
		return
	}
	for _, st := range c.streams {
		st.peak.observe(now, c.cfg.PeakHold, st.rates)
		st.peakRates = st.peak.rates(st.peakRates)
		// The allocator adds Margin to every rate for bursts: a peak replaces that margin
		// where it is higher, rather than adding to it.
		for i, r := range st.peakRates {
			st.peakRates[i] = max(st.rates[i], cc.BitrateFromFloat(float64(r)/(1+c.cfg.Alloc.Margin)))
		}
	}
}

func (c *Controller) usePeaks() bool { return c.cfg.Reserve > 0 && c.cfg.PeakHold > 0 }

// demandRates is what the allocator counts for a subscription's layers (before its Margin): their
// peaks if its path crosses a link with a reservation, their current rates otherwise.
func (c *Controller) demandRates(sub *subscription) []cc.Bitrate {
	if c.usePeaks() && len(sub.stream.peakRates) == len(sub.stream.rates) {
		for _, li := range sub.path {
			if c.reservable[li] {
				return sub.stream.peakRates
			}
		}
	}
	return sub.stream.rates
}

// rates returns each layer's highest rate among the samples held, in dst.
func (p *peakHold) rates(dst []cc.Bitrate) []cc.Bitrate {
	dst = dst[:0]
	for _, s := range p.samples {
		for i, r := range s.rates {
			if i == len(dst) {
				dst = append(dst, r)
			}
			dst[i] = max(dst[i], r)
		}
	}
	return dst
}
