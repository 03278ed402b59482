package scenario

// validate checks cross-references: unique names, paths over existing
// links, flow times inside the run.
func validate(d *decoder, s *Scenario) {
	links := map[string]bool{}
	between := map[[2]string]bool{}
	nodes := map[string]bool{}
	for _, l := range s.Links {
		if links[l.Name] {
			d.FailLine(l.Line, "links["+l.Name+"]", "duplicate link name")
		}
		links[l.Name] = true
		between[[2]string{l.From, l.To}] = true
		nodes[l.From], nodes[l.To] = true, true
	}
	if s.Interval > 0 {
		// Every link and flow keeps per-interval series; bound their size.
		samples := int64(s.Duration/s.Interval+1) * int64(len(s.Links)+len(s.Flows))
		if samples > 20_000_000 {
			d.FailLine(1, "interval", "%v samples of %d series is too many; use a longer interval", s.Duration/s.Interval, len(s.Links)+len(s.Flows))
		}
	}
	flows := map[string]bool{}
	for i := range s.Flows {
		f := &s.Flows[i]
		field := "flows[" + f.Group + "]"
		fail := func(sub, format string, args ...any) {
			d.FailLine(f.Line, field+sub, format, args...)
		}
		if flows[f.Name] {
			fail(".name", "duplicate flow name %q", f.Name)
		}
		flows[f.Name] = true
		checkPath := func(sub string, path []string) {
			if len(path) < 2 {
				fail(sub, "a path needs at least two nodes")
				return
			}
			for _, n := range path {
				if !nodes[n] {
					fail(sub, "no node %q (nodes come from links' from/to)", n)
					return
				}
			}
			for j := 0; j+1 < len(path); j++ {
				a, b := path[j], path[j+1]
				if !between[[2]string{a, b}] {
					fail(sub, "no link from %s to %s", a, b)
					return
				}
			}
		}
		before := d.Count()
		checkPath(".path", f.Path)
		if f.Kind != KindCBR && d.Count() == before {
			if f.ReversePath == nil && len(f.Path) >= 2 {
				f.ReversePath = reversed(f.Path)
				for j := 0; j+1 < len(f.ReversePath); j++ {
					if !between[[2]string{f.ReversePath[j], f.ReversePath[j+1]}] {
						fail(".path", "no link back from %s to %s for feedback; add duplex: true to the link or give reverse_path",
							f.ReversePath[j], f.ReversePath[j+1])
						break
					}
				}
			} else {
				checkPath(".reverse_path", f.ReversePath)
			}
		}
		if f.Stop > s.Duration {
			fail(".stop", "stop %v is after the end of the run (%v)", f.Stop, s.Duration)
		}
		if f.Start >= f.Stop {
			fail(".start", "start %v is not before stop %v", f.Start, f.Stop)
		}
		for _, p := range f.Pauses {
			if p.From < f.Start || p.To > f.Stop {
				fail(".pause", "pause %v–%v is outside the flow's lifetime", p.From, p.To)
			}
		}
	}
	if s.SFU != nil {
		validateSFU(d, s, between, flows)
	}
}

func reversed(p []string) []string {
	out := make([]string, len(p))
	for i, n := range p {
		out[len(p)-1-i] = n
	}
	return out
}
