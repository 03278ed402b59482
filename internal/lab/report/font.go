package report

import (
	"sync"

	"codeberg.org/go-fonts/liberation/liberationserifregular"
	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// fontMetrics measures text in Liberation Serif (gonum/plot's default font,
// embedded in the binary) in points. It is parsed on first use, not at
// start-up, so commands that draw nothing do not pay for it.
type fontMetrics struct {
	font *sfnt.Font
	mu   sync.Mutex
	buf  sfnt.Buffer
	// advance caches glyph advances in units of the font size.
	advance map[rune]float64
	// ascent and descent in units of the font size.
	asc, desc float64
}

var (
	fontOnce sync.Once
	fontM    *fontMetrics
)

// textFont returns the shared font metrics; the embedded font always parses.
func textFont() *fontMetrics {
	fontOnce.Do(func() {
		f, err := sfnt.Parse(liberationserifregular.TTF)
		if err != nil {
			panic("report: embedded Liberation Serif: " + err.Error())
		}
		m := &fontMetrics{font: f, advance: map[rune]float64{}}
		const ppem = 1 << 12 // measure at 4096 pixels per em (26.6 fixed point: 64 units per pixel)
		met, err := f.Metrics(&m.buf, fixed.I(ppem), font.HintingNone)
		if err != nil {
			panic("report: embedded Liberation Serif: " + err.Error())
		}
		m.asc = float64(met.Ascent) / 64 / ppem
		m.desc = float64(met.Descent) / 64 / ppem
		fontM = m
	})
	return fontM
}

func (m *fontMetrics) ascent(size float64) float64     { return m.asc * size }
func (m *fontMetrics) descent(size float64) float64    { return m.desc * size }
func (m *fontMetrics) lineHeight(size float64) float64 { return (m.asc + m.desc) * size }

// width is the advance of s at the given size, in points.
func (m *fontMetrics) width(s string, size float64) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := 0.0
	for _, r := range s {
		a, ok := m.advance[r]
		if !ok {
			const ppem = 1 << 12
			if g, err := m.font.GlyphIndex(&m.buf, r); err == nil {
				if adv, err := m.font.GlyphAdvance(&m.buf, g, fixed.I(ppem), font.HintingNone); err == nil {
					a = float64(adv) / 64 / ppem
				}
			}
			m.advance[r] = a
		}
		w += a
	}
	return w * size
}
