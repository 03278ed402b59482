package report

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"sync"
)

const maxPoints = 600

// series turns (t, y) into plot points, averaging groups of samples so a
// line has at most maxPoints points and skipping NaN samples.
func series(t, y []float64, scale float64) []xy {
	group := max(1, (len(t)+maxPoints-1)/maxPoints)
	out := make([]xy, 0, (len(t)+group-1)/group)
	for i := 0; i < len(t); i += group {
		sum, n := 0.0, 0
		for j := i; j < min(i+group, len(t)); j++ {
			if !math.IsNaN(y[j]) && !math.IsInf(y[j], 0) {
				sum += y[j]
				n++
			}
		}
		if n > 0 {
			out = append(out, xy{t[i], sum / float64(n) * scale})
		}
	}
	return out
}

// saveJobs are the two files of a chart, base.svg and base.png, as jobs
// that may run concurrently.
func saveJobs(c *chart, dir, base string) []func() error {
	return []func() error{
		func() error {
			p := newSVG()
			c.draw(p)
			return writeFile(filepath.Join(dir, base+".svg"), p.bytes())
		},
		func() error {
			p := newRaster()
			c.draw(p)
			f, err := os.Create(filepath.Join(dir, base+".png"))
			if err != nil {
				return err
			}
			w := bufio.NewWriterSize(f, 64<<10)
			err = p.encode(w)
			if err == nil {
				err = w.Flush()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		},
	}
}

// runAll runs the jobs concurrently and returns the first error.
func runAll(jobs []func() error) error {
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = j()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ratePlot is the received rate per flow, with the bottleneck's capacity
// dashed.
func ratePlot(r *Run) *chart {
	rate := &chart{title: r.Summary.Scenario + ": rate per flow", xLabel: "time (s)", yLabel: "Mbit/s"}
	for i, f := range r.Flows {
		rate.addLine(f.Name, series(f.T, f.Rate, 1e-6), paletteColor(i), false)
	}
	for _, l := range r.Links {
		if l.Name == r.Bottleneck {
			rate.addLine("capacity "+l.Name, series(l.T, l.Capacity, 1e-6), black, true)
		}
	}
	return rate
}

// plotJobs are the rate and queuing-delay plots of a run.
func plotJobs(dir string, r *Run) []func() error {
	rate := ratePlot(r)
	delay := &chart{title: r.Summary.Scenario + ": queuing delay", xLabel: "time (s)", yLabel: "ms"}
	for i, f := range r.Flows {
		delay.addLine(f.Name, series(f.T, f.QDelayMs, 1), paletteColor(i), false)
	}
	return append(saveJobs(rate, dir, "rate"), saveJobs(delay, dir, "delay")...)
}

// SweepPoint is one sweep value with the metric measured there.
type SweepPoint struct {
	Label  string
	X      float64 // numeric value of the label, NaN if it has none
	Values map[string]float64
}

// writeSweepPlot plots each named series of the points against the swept
// value (its numeric value when every label has one, else its position).
func writeSweepPlot(dir, base, title, xLabel, yLabel string, names []string, points []SweepPoint) error {
	numeric := true
	for _, pt := range points {
		numeric = numeric && !math.IsNaN(pt.X)
	}
	c := &chart{title: title, xLabel: xLabel, yLabel: yLabel}
	for i, name := range names {
		var pts []xy
		for j, pt := range points {
			v, ok := pt.Values[name]
			if !ok || math.IsNaN(v) {
				continue
			}
			x := float64(j)
			if numeric {
				x = pt.X
			}
			pts = append(pts, xy{x, v})
		}
		if len(pts) > 0 {
			c.series = append(c.series, chartSeries{name: name, pts: pts, color: paletteColor(i), width: 1, ring: 2.5})
		}
	}
	if !numeric {
		for _, pt := range points {
			c.xNames = append(c.xNames, pt.Label)
		}
	}
	return runAll(saveJobs(c, dir, base))
}
