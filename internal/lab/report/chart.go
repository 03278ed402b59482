package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
)

// The lab's plots are drawn by a small renderer of its own rather than by a
// general plotting library: a run writes four images, and a library's
// general machinery (vector paths through a generic canvas, an RGBA
// rasteriser, fmt-based SVG) cost more than the simulation itself. A chart
// is laid out once in points (1/72 inch, y pointing down) and painted twice,
// as SVG and as PNG; the layout follows gonum/plot's defaults (its tick
// choice, 12-point Liberation Serif for title, axis labels and legend,
// 10-point tick labels, a legend in the top right corner, a grey grid at
// the major ticks), so the plots look as they did when gonum drew them.

// Chart size in points: 9 by 4.5 inches.
const (
	chartW = 648
	chartH = 324
)

// xy is one data point.
type xy struct{ x, y float64 }

// chartSeries is one named set of points, drawn as a line, as rings, or both.
type chartSeries struct {
	name   string
	pts    []xy
	color  color.RGBA
	width  float64 // line width in points; 0 draws no line
	dashed bool
	ring   float64 // ring radius in points; 0 draws no rings
}

// chart is a plot: title, axis labels and series. Y starts at 0. With
// xNames the x axis is nominal: point i sits at x = i under xNames[i].
type chart struct {
	title, xLabel, yLabel string
	series                []chartSeries
	xNames                []string
}

// palette is gonum/plot's soft colour set, which the lab's plots have
// always used: series i takes palette[i % 7].
var palette = []color.RGBA{
	{241, 90, 96, 255}, {122, 195, 106, 255}, {90, 155, 212, 255}, {250, 167, 91, 255},
	{158, 103, 171, 255}, {206, 112, 88, 255}, {215, 127, 180, 255},
}

func paletteColor(i int) color.RGBA { return palette[i%len(palette)] }

var black = color.RGBA{0, 0, 0, 255}

// addLine adds a line series unless it has no points.
func (c *chart) addLine(name string, pts []xy, col color.RGBA, dashed bool) {
	if len(pts) > 0 {
		c.series = append(c.series, chartSeries{name: name, pts: pts, color: col, width: 1.2, dashed: dashed})
	}
}

// addPoints adds a series drawn as rings: PER has no value where a layer
// sent nothing, and a line would bridge those gaps.
func (c *chart) addPoints(name string, pts []xy, col color.RGBA) {
	if len(pts) > 0 {
		c.series = append(c.series, chartSeries{name: name, pts: pts, color: col, ring: 2})
	}
}

// textAlign is a text's horizontal anchor.
type textAlign int

const (
	alignLeft textAlign = iota
	alignCenter
	alignRight
)

// painter is an output format. Coordinates are points, y down; text is
// placed by its baseline. A vertical text reads upwards, centred on (x, y)
// along its length, with its baseline at x.
type painter interface {
	polyline(pts []xy, c color.RGBA, width float64, dashes []float64)
	ring(x, y, r, width float64, c color.RGBA)
	text(x, y float64, s string, size float64, align textAlign, vertical bool)
}

const (
	titleSize   = 12
	labelSize   = 12
	tickSize    = 10
	tickLength  = 8
	axisPadding = 5  // between an axis and the data (gonum's Axis.Padding)
	thumbWidth  = 20 // legend thumbnails (gonum's Legend.ThumbnailWidth)
	gridWidth   = 0.25
	axisWidth   = 0.5
)

var gridColor = color.RGBA{128, 128, 128, 255}

// tick is an axis mark; minor ticks have no label.
type tick struct {
	value float64
	label string
}

// ticks are gonum's default ticks over [lo, hi], or the nominal names.
func (c *chart) ticks(lo, hi float64, nominal []string) []tick {
	var out []tick
	if nominal != nil {
		for i, n := range nominal {
			out = append(out, tick{float64(i), n})
		}
		return out
	}
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		out = append(out, tick{t.Value, t.Label})
	}
	return out
}

// ranges is the data's extent: x from the points (all of xNames when
// nominal), y from 0 to the largest value; an empty range is widened by 1
// either way, as gonum does.
func (c *chart) ranges() (x0, x1, y0, y1 float64) {
	x0, x1, y0, y1 = math.Inf(1), math.Inf(-1), 0, math.Inf(-1)
	for _, s := range c.series {
		for _, p := range s.pts {
			x0, x1 = math.Min(x0, p.x), math.Max(x1, p.x)
			y1 = math.Max(y1, p.y)
		}
	}
	if c.xNames != nil {
		x0, x1 = math.Min(x0, 0), math.Max(x1, float64(len(c.xNames)-1))
	}
	if math.IsInf(x0, 0) {
		x0, x1 = 0, 0
	}
	if math.IsInf(y1, 0) {
		y1 = 0
	}
	if x0 == x1 {
		x0, x1 = x0-1, x1+1
	}
	if y0 == y1 {
		y0, y1 = y0-1, y1+1
	}
	return x0, x1, y0, y1
}

// draw lays the chart out and paints it.
func (c *chart) draw(p painter) {
	x0, x1, y0, y1 := c.ranges()
	xt, yt := c.ticks(x0, x1, c.xNames), c.ticks(y0, y1, nil)
	fm := textFont()
	labelH := fm.lineHeight(labelSize)
	tickH := fm.lineHeight(tickSize)
	yLabelW := 0.0
	for _, t := range yt {
		yLabelW = math.Max(yLabelW, fm.width(t.label, tickSize))
	}
	xTick := float64(tickLength)
	if c.xNames != nil {
		xTick = 0 // gonum's NominalX: no x tick marks
	}
	// The axes' lines, and the data area inside them.
	axisX := labelH + yLabelW + 2 + tickLength
	axisY := chartH - labelH - tickH - xTick
	top := fm.lineHeight(titleSize) + axisPadding
	right := chartW - 2.0
	for i := len(xt) - 1; i >= 0; i-- { // room for half the last label
		if xt[i].label != "" && xt[i].value <= x1 {
			right -= fm.width(xt[i].label, tickSize) / 2
			break
		}
	}
	left, bottom := axisX+axisPadding, axisY-axisPadding
	if c.xNames != nil {
		left += fm.width(c.xNames[0], tickSize) / 2
		right -= fm.width(c.xNames[len(c.xNames)-1], tickSize) / 2
	}
	px := func(x float64) float64 { return left + (x-x0)/(x1-x0)*(right-left) }
	py := func(y float64) float64 { return bottom - (y-y0)/(y1-y0)*(bottom-top) }

	// Grid at the major ticks.
	for _, t := range xt {
		if t.label != "" && c.xNames == nil {
			p.polyline([]xy{{px(t.value), top}, {px(t.value), bottom}}, gridColor, gridWidth, nil)
		}
	}
	for _, t := range yt {
		if t.label != "" && t.value >= y0 && t.value <= y1 {
			p.polyline([]xy{{left, py(t.value)}, {right, py(t.value)}}, gridColor, gridWidth, nil)
		}
	}
	// Data.
	pts := make([]xy, 0, 1024)
	for _, s := range c.series {
		pts = pts[:0]
		for _, d := range s.pts {
			pts = append(pts, xy{px(d.x), py(d.y)})
		}
		if s.width > 0 {
			p.polyline(pts, s.color, s.width, dashesOf(s.dashed))
		}
		if s.ring > 0 {
			for _, q := range pts {
				p.ring(q.x, q.y, s.ring, axisWidth, s.color)
			}
		}
	}
	// Axes, ticks and their labels.
	p.polyline([]xy{{axisX, axisY}, {right + axisPadding, axisY}}, black, axisWidth, nil)
	p.polyline([]xy{{axisX, axisY}, {axisX, top - axisPadding}}, black, axisWidth, nil)
	for _, t := range xt {
		x := px(t.value)
		if x < left-0.01 || x > right+0.01 {
			continue
		}
		if xTick > 0 {
			p.polyline([]xy{{x, axisY}, {x, axisY + tickLen(t)}}, black, axisWidth, nil)
		}
		if t.label != "" {
			p.text(x, axisY+xTick+fm.ascent(tickSize), t.label, tickSize, alignCenter, false)
		}
	}
	for _, t := range yt {
		y := py(t.value)
		if y < top-0.01 || y > bottom+0.01 {
			continue
		}
		p.polyline([]xy{{axisX - tickLen(t), y}, {axisX, y}}, black, axisWidth, nil)
		if t.label != "" {
			p.text(axisX-tickLength-2, y+fm.ascent(tickSize)/2-fm.descent(tickSize)/2, t.label, tickSize, alignRight, false)
		}
	}
	p.text((axisX+right)/2, chartH-fm.descent(labelSize), c.xLabel, labelSize, alignCenter, false)
	p.text(fm.ascent(labelSize), (top+axisY)/2, c.yLabel, labelSize, alignCenter, true)
	p.text(chartW/2, fm.ascent(titleSize), c.title, titleSize, alignCenter, false)
	c.drawLegend(p, right, top)
}

func tickLen(t tick) float64 {
	if t.label == "" {
		return tickLength / 2
	}
	return tickLength
}

func dashesOf(dashed bool) []float64 {
	if dashed {
		return []float64{4, 3}
	}
	return nil
}

// drawLegend lists the series in the data area's top right corner: each
// name right-aligned before a thumbnail of its line or ring.
func (c *chart) drawLegend(p painter, right, top float64) {
	fm := textFont()
	h := fm.lineHeight(labelSize)
	iconX := right - thumbWidth
	textX := iconX - fm.width(" ", labelSize)
	y := top
	for _, s := range c.series {
		if s.name == "" {
			continue
		}
		mid := y + h/2
		if s.width > 0 {
			p.polyline([]xy{{iconX, mid}, {iconX + thumbWidth, mid}}, s.color, s.width, dashesOf(s.dashed))
		}
		if s.ring > 0 {
			p.ring(iconX+thumbWidth/2, mid, s.ring, axisWidth, s.color)
		}
		p.text(textX, y+fm.ascent(labelSize), s.name, labelSize, alignRight, false)
		y += h
	}
}
