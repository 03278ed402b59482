package sampler

import (
	"os"
	"time"
)

// Reading is one sample of a process.
type Reading struct {
	// OK is false when the process could not be read (gone, or no PID known).
	OK   bool
	Stat ProcStat
	// Mixer is the CPU time of the process's audio mixing threads (MixerThreadPrefix).
	Mixer time.Duration
	// Net sums the namespace's interfaces other than loopback; NetIsolated says whether the
	// process has the namespace to itself, so the counters measure it alone.
	Net         NetCounters
	NetIsolated bool
}

// Sampler reads one process.
type Sampler struct {
	pid      int
	isolated bool
}

// New samples pid (0: nothing to sample; every reading is not OK).
func New(pid int) *Sampler {
	return &Sampler{pid: pid, isolated: pid > 0 && !SameNetNS(pid)}
}

// Self samples this process.
func Self() *Sampler { return New(os.Getpid()) }

// PID is the sampled process.
func (s *Sampler) PID() int { return s.pid }

// Read takes one sample.
func (s *Sampler) Read() Reading {
	if s.pid <= 0 {
		return Reading{}
	}
	st, err := ReadStat(s.pid)
	if err != nil {
		return Reading{}
	}
	r := Reading{OK: true, Stat: st, NetIsolated: s.isolated}
	r.Mixer, _ = ThreadsCPU(s.pid, MixerThreadPrefix)
	if s.isolated {
		if devs, err := ReadNetDev(s.pid); err == nil {
			for name, c := range devs {
				if name != "lo" {
					r.Net = r.Net.Add(c)
				}
			}
		}
	}
	return r
}

// MixerCPUPercent is the CPU the mixing threads used between two readings, % of one core.
func MixerCPUPercent(prev, cur Reading, elapsed time.Duration) float64 {
	if !prev.OK || !cur.OK || elapsed <= 0 || cur.Mixer < prev.Mixer {
		return 0
	}
	return float64(cur.Mixer-prev.Mixer) / float64(elapsed) * 100
}

// CPUPercent is the CPU used between two readings as a percentage of one core.
func CPUPercent(prev, cur Reading, elapsed time.Duration) float64 {
	if !prev.OK || !cur.OK || elapsed <= 0 {
		return 0
	}
	return float64(cur.Stat.CPU-prev.Stat.CPU) / float64(elapsed) * 100
}
