package report

import (
	"image/color"
	"strconv"
	"strings"
)

// svgPainter writes a chart as SVG, appending to one buffer with strconv
// rather than fmt: coordinates carry two decimals (1/7200 inch).
type svgPainter struct{ b []byte }

func newSVG() *svgPainter {
	p := &svgPainter{b: make([]byte, 0, 64<<10)}
	p.b = append(p.b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="648pt" height="324pt" viewBox="0 0 648 324">
<rect width="648" height="324" fill="#ffffff"/>
`...)
	return p
}

func (p *svgPainter) bytes() []byte { return append(p.b, "</svg>\n"...) }

// num appends x with at most two decimals and no trailing zeros.
func (p *svgPainter) num(x float64) {
	n := len(p.b)
	p.b = strconv.AppendFloat(p.b, x, 'f', 2, 64)
	for p.b[len(p.b)-1] == '0' {
		p.b = p.b[:len(p.b)-1]
	}
	if p.b[len(p.b)-1] == '.' {
		p.b = p.b[:len(p.b)-1]
	}
	if string(p.b[n:]) == "-0" {
		p.b = append(p.b[:n], '0')
	}
}

func (p *svgPainter) color(c color.RGBA) {
	const hex = "0123456789abcdef"
	p.b = append(p.b, '#', hex[c.R>>4], hex[c.R&15], hex[c.G>>4], hex[c.G&15], hex[c.B>>4], hex[c.B&15])
}

func (p *svgPainter) polyline(pts []xy, c color.RGBA, width float64, dashes []float64) {
	if len(pts) == 0 {
		return
	}
	p.b = append(p.b, `<path fill="none" stroke="`...)
	p.color(c)
	p.b = append(p.b, `" stroke-width="`...)
	p.num(width)
	if len(dashes) > 0 {
		p.b = append(p.b, `" stroke-dasharray="`...)
		for i, d := range dashes {
			if i > 0 {
				p.b = append(p.b, ',')
			}
			p.num(d)
		}
	}
	p.b = append(p.b, `" d="M`...)
	for i, q := range pts {
		if i > 0 {
			p.b = append(p.b, 'L')
		}
		p.num(q.x)
		p.b = append(p.b, ' ')
		p.num(q.y)
	}
	p.b = append(p.b, "\"/>\n"...)
}

func (p *svgPainter) ring(x, y, r, width float64, c color.RGBA) {
	p.b = append(p.b, `<circle fill="none" stroke="`...)
	p.color(c)
	p.b = append(p.b, `" stroke-width="`...)
	p.num(width)
	p.b = append(p.b, `" cx="`...)
	p.num(x)
	p.b = append(p.b, `" cy="`...)
	p.num(y)
	p.b = append(p.b, `" r="`...)
	p.num(r)
	p.b = append(p.b, "\"/>\n"...)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func (p *svgPainter) text(x, y float64, s string, size float64, align textAlign, vertical bool) {
	if s == "" {
		return
	}
	p.b = append(p.b, `<text font-family="Liberation Serif, Times New Roman, serif" font-size="`...)
	p.num(size)
	p.b = append(p.b, `" x="`...)
	p.num(x)
	p.b = append(p.b, `" y="`...)
	p.num(y)
	switch align {
	case alignCenter:
		p.b = append(p.b, `" text-anchor="middle`...)
	case alignRight:
		p.b = append(p.b, `" text-anchor="end`...)
	}
	if vertical {
		p.b = append(p.b, `" transform="rotate(-90 `...)
		p.num(x)
		p.b = append(p.b, ' ')
		p.num(y)
		p.b = append(p.b, ')')
	}
	p.b = append(p.b, `">`...)
	p.b = append(p.b, xmlEscaper.Replace(s)...)
	p.b = append(p.b, "</text>\n"...)
}
