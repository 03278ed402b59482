package report

import (
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

const maxPoints = 600

// series turns (t, y) into plot points, averaging groups of samples so a
// line has at most maxPoints points and skipping NaN samples.
func series(t, y []float64, scale float64) plotter.XYs {
	group := max(1, (len(t)+maxPoints-1)/maxPoints)
	var out plotter.XYs
	for i := 0; i < len(t); i += group {
		sum, n := 0.0, 0
		for j := i; j < min(i+group, len(t)); j++ {
			if !math.IsNaN(y[j]) && !math.IsInf(y[j], 0) {
				sum += y[j]
				n++
			}
		}
		if n > 0 {
			out = append(out, plotter.XY{X: t[i], Y: sum / float64(n) * scale})
		}
	}
	return out
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func addLine(p *plot.Plot, name string, pts plotter.XYs, c color.Color, dashed bool) {
	if len(pts) == 0 {
		return
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return
	}
	l.Color = c
	l.Width = vg.Points(1.2)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	p.Legend.Add(name, l)
}

// save writes the plot as PNG and SVG.
func save(p *plot.Plot, dir, base string) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(9*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, base+ext)); err != nil {
			return err
		}
	}
	return nil
}

func writePlots(dir string, r *Run) error {
	rate := newPlot(r.Summary.Scenario+": rate per flow", "time (s)", "Mbit/s")
	for i, f := range r.Flows {
		addLine(rate, f.Name, series(f.T, f.Rate, 1e-6), plotutil.Color(i), false)
	}
	for _, l := range r.Links {
		if l.Name == r.Bottleneck {
			addLine(rate, "capacity "+l.Name, series(l.T, l.Capacity, 1e-6), color.Black, true)
		}
	}
	if err := save(rate, dir, "rate"); err != nil {
		return err
	}
	delay := newPlot(r.Summary.Scenario+": queuing delay", "time (s)", "ms")
	for i, f := range r.Flows {
		addLine(delay, f.Name, series(f.T, f.QDelayMs, 1), plotutil.Color(i), false)
	}
	return save(delay, dir, "delay")
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
	p := newPlot(title, xLabel, yLabel)
	for i, name := range names {
		var xy plotter.XYs
		for j, pt := range points {
			v, ok := pt.Values[name]
			if !ok || math.IsNaN(v) {
				continue
			}
			x := float64(j)
			if numeric {
				x = pt.X
			}
			xy = append(xy, plotter.XY{X: x, Y: v})
		}
		if len(xy) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xy)
		if err != nil {
			continue
		}
		l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
		s.Shape = draw.CircleGlyph{}
		p.Add(l, s)
		p.Legend.Add(name, l, s)
	}
	if !numeric {
		labels := make([]string, len(points))
		for i, pt := range points {
			labels[i] = pt.Label
		}
		p.NominalX(labels...)
	}
	return save(p, dir, base)
}
