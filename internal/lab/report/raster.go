package report

import (
	"image"
	"image/color"
	"io"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// pxPerPt is the PNG's resolution: 96 dots per inch, gonum/plot's default,
// so a chart is 864 by 432 pixels.
const pxPerPt = 96.0 / 72

// rasterPainter draws a chart into an RGBA image. Lines are anti-aliased
// by their distance to each pixel centre; a polyline's coverage is
// collected in a mask (the maximum over its segments, so joints are not
// painted twice) and blended once.
type rasterPainter struct {
	img  *image.RGBA
	mask []uint8
	// spanLo and spanHi are the columns of each row that the mask may
	// cover (spanLo > spanHi: none), so blending skips what no segment
	// touched.
	spanLo, spanHi []int
	faces          map[float64]font.Face
}

func newRaster() *rasterPainter {
	w, h := int(chartW*pxPerPt), int(chartH*pxPerPt)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	pix := img.Pix // white: fill the first byte and double it
	pix[0] = 0xff
	for n := 1; n < len(pix); n *= 2 {
		copy(pix[n:], pix[:n])
	}
	p := &rasterPainter{img: img, mask: make([]uint8, w*h), spanLo: make([]int, h), spanHi: make([]int, h),
		faces: map[float64]font.Face{}}
	for y := range p.spanLo {
		p.spanLo[y], p.spanHi[y] = w, -1
	}
	return p
}

// encode writes the image as PNG (writePNG: fast, not small).
func (p *rasterPainter) encode(w io.Writer) error { return writePNG(w, p.img) }

func (p *rasterPainter) polyline(pts []xy, c color.RGBA, width float64, dashes []float64) {
	if len(dashes) == 0 {
		p.stroke(pts, c, width)
		return
	}
	for _, piece := range dash(pts, dashes) {
		p.stroke(piece, c, width)
	}
}

// dash cuts a polyline into its dashes; pattern alternates on and off
// lengths, in points.
func dash(pts []xy, pattern []float64) [][]xy {
	var out [][]xy
	var cur []xy
	k, left, on := 0, pattern[0], true
	if len(pts) > 0 {
		cur = append(cur, pts[0])
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		seg := math.Hypot(b.x-a.x, b.y-a.y)
		pos := 0.0
		for seg-pos > left {
			pos += left
			q := xy{a.x + (b.x-a.x)*pos/seg, a.y + (b.y-a.y)*pos/seg}
			if on {
				out = append(out, append(cur, q))
				cur = nil
			} else {
				cur = []xy{q}
			}
			on = !on
			k = (k + 1) % len(pattern)
			left = pattern[k]
		}
		left -= seg - pos
		if on {
			cur = append(cur, b)
		}
	}
	if on && len(cur) > 1 {
		out = append(out, cur)
	}
	return out
}

func (p *rasterPainter) stroke(pts []xy, c color.RGBA, width float64) {
	if len(pts) == 0 {
		return
	}
	w, h := p.img.Rect.Dx(), p.img.Rect.Dy()
	reach := width*pxPerPt/2 + 0.5 // beyond this distance a pixel is not touched
	// A line thinner than a pixel covers at most its width of one.
	peak := math.Min(width*pxPerPt, 1)
	by0, by1 := h, -1 // the rows touched
	for i := range pts {
		a := pts[max(i-1, 0)]
		b := pts[i]
		ax, ay, bx, by := a.x*pxPerPt, a.y*pxPerPt, b.x*pxPerPt, b.y*pxPerPt
		x0 := max(0, int(math.Floor(math.Min(ax, bx)-reach)))
		x1 := min(w-1, int(math.Floor(math.Max(ax, bx)+reach)))
		y0 := max(0, int(math.Floor(math.Min(ay, by)-reach)))
		y1 := min(h-1, int(math.Floor(math.Max(ay, by)+reach)))
		if x0 > x1 || y0 > y1 {
			continue
		}
		by0, by1 = min(by0, y0), max(by1, y1)
		dx, dy := bx-ax, by-ay
		length := math.Sqrt(dx*dx + dy*dy)
		ux, uy := 1.0, 0.0 // the segment's direction (any, for a point)
		if length > 0 {
			ux, uy = dx/length, dy/length
		}
		for y := y0; y <= y1; y++ {
			fy := float64(y) + 0.5
			xl, xr := x0, x1
			if dy != 0 { // only the part of the segment within reach of this row
				t0, t1 := (fy-reach-ay)/dy, (fy+reach-ay)/dy
				if t0 > t1 {
					t0, t1 = t1, t0
				}
				t0, t1 = clamp01(t0), clamp01(t1)
				xa, xb := ax+t0*dx, ax+t1*dx
				if xa > xb {
					xa, xb = xb, xa
				}
				// int truncates rather than floors, which differs only below
				// zero, where x0 (never negative) takes over.
				xl, xr = max(x0, int(xa-reach)), min(x1, int(xb+reach))
			}
			p.spanLo[y], p.spanHi[y] = min(p.spanLo[y], xl), max(p.spanHi[y], xr)
			row := p.mask[y*w : (y+1)*w]
			ry := fy - ay
			for x := xl; x <= xr; x++ {
				rx := float64(x) + 0.5 - ax
				// Beside the segment the distance is the perpendicular
				// one; beyond its ends, the distance to the nearer end.
				var d float64
				switch along := rx*ux + ry*uy; {
				case along < 0:
					d = math.Sqrt(rx*rx + ry*ry)
				case along > length:
					ex, ey := rx-dx, ry-dy
					d = math.Sqrt(ex*ex + ey*ey)
				default:
					d = math.Abs(rx*uy - ry*ux)
				}
				cov := reach - d
				if cov <= 0 {
					continue
				}
				if cov > peak {
					cov = peak
				}
				m := uint8(cov*255 + 0.5)
				if m > row[x] {
					row[x] = m
				}
			}
		}
	}
	p.blendMask(by0, by1, c)
}

// clamp01 is t clamped to [0, 1] (math.Min and math.Max, which handle NaN
// and signed zeros, cost a call each in the stroke loop).
func clamp01(t float64) float64 {
	if t < 0 {
		return 0
	}
	if t > 1 {
		return 1
	}
	return t
}

// blendMask paints c through the mask over the rows' spans and clears the
// mask.
func (p *rasterPainter) blendMask(y0, y1 int, c color.RGBA) {
	w := p.img.Rect.Dx()
	for y := y0; y <= y1; y++ {
		row := p.mask[y*w : (y+1)*w]
		pix := p.img.Pix[y*p.img.Stride:]
		x0, x1 := p.spanLo[y], p.spanHi[y]
		p.spanLo[y], p.spanHi[y] = w, -1
		for x := x0; x <= x1; x++ {
			m := uint32(row[x])
			if m == 0 {
				continue
			}
			row[x] = 0
			o := pix[4*x : 4*x+3 : 4*x+3]
			o[0] = blend(o[0], c.R, m)
			o[1] = blend(o[1], c.G, m)
			o[2] = blend(o[2], c.B, m)
		}
	}
}

// blend mixes src over dst with coverage m of 255.
func blend(dst, src uint8, m uint32) uint8 {
	return uint8((uint32(dst)*(255-m) + uint32(src)*m + 127) / 255)
}

func (p *rasterPainter) ring(x, y, r, width float64, c color.RGBA) {
	w, h := p.img.Rect.Dx(), p.img.Rect.Dy()
	cx, cy, rr := x*pxPerPt, y*pxPerPt, r*pxPerPt
	reach := width*pxPerPt/2 + 0.5
	x0, x1 := max(0, int(cx-rr-reach)), min(w-1, int(cx+rr+reach))
	y0, y1 := max(0, int(cy-rr-reach)), min(h-1, int(cy+rr+reach))
	if x0 > x1 || y0 > y1 {
		return
	}
	for py := y0; py <= y1; py++ {
		p.spanLo[py], p.spanHi[py] = min(p.spanLo[py], x0), max(p.spanHi[py], x1)
		for px := x0; px <= x1; px++ {
			d := math.Abs(math.Hypot(float64(px)+0.5-cx, float64(py)+0.5-cy) - rr)
			if cov := reach - d; cov > 0 {
				p.mask[py*w+px] = uint8(math.Min(cov, 1)*255 + 0.5)
			}
		}
	}
	p.blendMask(y0, y1, c)
}

// face is Liberation Serif at size points and the PNG's resolution.
func (p *rasterPainter) face(size float64) font.Face {
	f, ok := p.faces[size]
	if !ok {
		var err error
		f, err = opentype.NewFace(textFont().font, &opentype.FaceOptions{Size: size, DPI: 72 * pxPerPt, Hinting: font.HintingNone})
		if err != nil {
			panic("report: embedded Liberation Serif: " + err.Error())
		}
		p.faces[size] = f
	}
	return f
}

func (p *rasterPainter) text(x, y float64, s string, size float64, align textAlign, vertical bool) {
	if s == "" {
		return
	}
	f := p.face(size)
	adv := font.MeasureString(f, s)
	x, y = x*pxPerPt, y*pxPerPt
	shift := 0.0
	switch align {
	case alignCenter:
		shift = float64(adv) / 64 / 2
	case alignRight:
		shift = float64(adv) / 64
	}
	if !vertical {
		d := font.Drawer{Dst: p.img, Src: image.NewUniform(color.Black), Face: f,
			Dot: fixed.Point26_6{X: fixed.Int26_6((x - shift) * 64), Y: fixed.Int26_6(y * 64)}}
		d.DrawString(s)
		return
	}
	// Upright text drawn into a mask of its own, then turned a quarter to
	// the left: mask pixel (sx, sy) lands at (left+sy, top+w-1-sx).
	m := f.Metrics()
	asc, tw := m.Ascent.Ceil(), adv.Ceil()
	th := asc + m.Descent.Ceil()
	mask := image.NewAlpha(image.Rect(0, 0, tw, th))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: f, Dot: fixed.P(0, asc)}
	d.DrawString(s)
	left, top := int(math.Round(x))-asc, int(math.Round(y-shift))
	b := p.img.Rect
	for sy := 0; sy < th; sy++ {
		for sx := 0; sx < tw; sx++ {
			a := mask.Pix[sy*mask.Stride+sx]
			dx, dy := left+sy, top+tw-1-sx
			if a == 0 || !image.Pt(dx, dy).In(b) {
				continue
			}
			o := p.img.Pix[p.img.PixOffset(dx, dy):]
			for k := 0; k < 3; k++ {
				o[k] = blend(o[k], 0, uint32(a))
			}
		}
	}
}
