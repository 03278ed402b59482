package scenario

import "time"

// ScaleTime stretches or shrinks the scenario's time axis by f: the run's
// duration, flow starts, stops, pauses and start steps, on/off idle times
// and capacity-schedule steps. Delays, queue sizes and controller
// parameters stay as they are. Tests use it to run the library at
// shortened durations.
func (s *Scenario) ScaleTime(f float64) {
	if f == 1 || f <= 0 {
		return
	}
	sc := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
	s.Duration = sc(s.Duration)
	if s.Interval > s.Duration {
		s.Interval = s.Duration
	}
	for i := range s.Links {
		rate := append(s.Links[i].Rate[:0:0], s.Links[i].Rate...)
		for j := range rate {
			rate[j].At = sc(rate[j].At)
		}
		s.Links[i].Rate = rate
	}
	for i := range s.Flows {
		f := &s.Flows[i]
		f.Start, f.Stop, f.StartJitter = sc(f.Start), sc(f.Stop), sc(f.StartJitter)
		f.Stop = min(f.Stop, s.Duration)
		pauses := append(f.Pauses[:0:0], f.Pauses...)
		for j := range pauses {
			pauses[j].From, pauses[j].To = sc(pauses[j].From), sc(pauses[j].To)
		}
		f.Pauses = pauses
		if f.OnOff != nil {
			o := *f.OnOff
			o.OffMean = sc(o.OffMean)
			f.OnOff = &o
		}
	}
	if s.SFU != nil {
		for i := range s.SFU.Sessions {
			ss := &s.SFU.Sessions[i]
			ss.Start, ss.Stop = sc(ss.Start), min(sc(ss.Stop), s.Duration)
		}
	}
}
