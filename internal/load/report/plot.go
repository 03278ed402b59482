package report

import (
	"errors"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Colours of the plots (exported so comparisons keep one colour per server).
var (
	ServerColor    = color.RGBA{R: 200, G: 40, B: 40, A: 255}
	GeneratorColor = color.RGBA{R: 40, G: 90, B: 200, A: 255}
	OutColor       = color.RGBA{R: 30, G: 140, B: 60, A: 255}
)

// Series is one line of a participants plot.
type Series struct {
	Name   string
	Color  color.Color
	Dashed bool
	Y      func(Sample) (float64, bool)
}

// WritePlots draws, against the number of participants, the server's CPU (and the generator's),
// the server's memory, and the bandwidth into and out of the server: seed 001's figures 3 and 4
// (videoroom) and 5 and 6 (audio). Each is written as PNG and SVG.
func WritePlots(dir string, r *Result) error {
	cpu := []Series{
		{Name: "server CPU (% of a core)", Color: ServerColor, Y: func(s Sample) (float64, bool) { return s.ServerCPUPct, s.ServerOK }},
		{Name: "generator CPU", Color: GeneratorColor, Dashed: true, Y: func(s Sample) (float64, bool) { return s.GenCPUPct, true }},
	}
	mem := []Series{
		{Name: "server RSS (MB)", Color: ServerColor, Y: func(s Sample) (float64, bool) { return mb(s.ServerRSSBytes), s.ServerOK }},
	}
	// Bandwidth from the server's point of view, like the paper's: what clients send it (in) and
	// what it sends them (out). Its own interface counters when isolated, otherwise the RTP the
	// generator sent and received.
	in := func(s Sample) (float64, bool) { return s.SentMbps, true }
	out := func(s Sample) (float64, bool) { return s.RecvMbps, true }
	label := "RTP"
	if r.Server.NetIsolated {
		in = func(s Sample) (float64, bool) { return s.NetInMbps, true }
		out = func(s Sample) (float64, bool) { return s.NetOutMbps, true }
		label = "interface"
	}
	bw := []Series{
		{Name: "into the server (Mbit/s, " + label + ")", Color: ServerColor, Y: in},
		{Name: "out of the server (Mbit/s, " + label + ")", Color: OutColor, Y: out},
	}
	title := r.Plan.Name
	return errors.Join(
		participantsPlot(dir, "cpu", title+": CPU", "CPU (% of one core)", r.Samples, cpu),
		participantsPlot(dir, "memory", title+": memory", "MB", r.Samples, mem),
		participantsPlot(dir, "bandwidth", title+": bandwidth", "Mbit/s", r.Samples, bw),
	)
}

// participantsPlot draws series against the participant count, in time order, so a hold at full
// load shows as a vertical spread at the right edge.
func participantsPlot(dir, base, title, yLabel string, samples []Sample, series []Series) error {
	var lines []Line
	for _, s := range series {
		l := Line{Name: s.Name, Color: s.Color, Dashed: s.Dashed}
		for _, x := range samples {
			if y, ok := s.Y(x); ok {
				l.X = append(l.X, float64(x.Participants()))
				l.Y = append(l.Y, y)
			}
		}
		lines = append(lines, l)
	}
	return PlotLines(filepath.Join(dir, base), title, "participants", yLabel, lines)
}

// Line is one line of a plot.
type Line struct {
	Name   string
	Color  color.Color
	Dashed bool
	X, Y   []float64
}

// PlotLines draws lines on one pair of axes starting at zero and writes base.png and base.svg.
func PlotLines(base, title, xLabel, yLabel string, lines []Line) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Min, p.Y.Min = 0, 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	for _, l := range lines {
		pts := make(plotter.XYs, 0, len(l.X))
		for i := range l.X {
			pts = append(pts, plotter.XY{X: l.X[i], Y: l.Y[i]})
		}
		if len(pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = l.Color
		line.Width = vg.Points(1.3)
		if l.Dashed {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line)
		p.Legend.Add(l.Name, line)
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(8*vg.Inch, 4.5*vg.Inch, base+ext); err != nil {
			return err
		}
	}
	return nil
}
