package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

// dumbbellRun is a run shaped like the ns-3 yardstick's: six flows and a
// bottleneck over 100 s in 100 ms intervals, with sawtooth-like rates.
func dumbbellRun() *Run {
	const n = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	t := make([]float64, n)
	for i := range t {
		t[i] = float64(i) / 10
	}
	r := &Run{Summary: metrics.Summary{Scenario: "ns3-dumbbell", Engine: "sim"}, Bottleneck: "bottleneck"}
	for f := 0; f < 6; f++ {
		fs := metrics.FlowSeries{Name: "f" + strconv.Itoa(f), T: t}
		for _, col := range []*[]float64{&fs.Rate, &fs.Goodput, &fs.Send, &fs.Target, &fs.Cwnd, &fs.QDelayMs, &fs.RTTMs, &fs.Lost} {
			*col = make([]float64, n)
		}
		for i := range t {
			fs.Rate[i] = 1.6e6 * (0.5 + rng.Float64())
			fs.Goodput[i], fs.Send[i] = fs.Rate[i]*0.96, fs.Rate[i]
			fs.Target[i] = math.NaN()
			fs.Cwnd[i] = float64(1448 * (10 + i%40))
			fs.QDelayMs[i] = 120 * rng.Float64()
			fs.RTTMs[i] = 44 + fs.QDelayMs[i]
		}
		fs.QDelayMs[3] = math.NaN() // an interval without deliveries
		r.Flows = append(r.Flows, fs)
	}
	ls := metrics.LinkSeries{Name: "bottleneck", T: t}
	for _, col := range []*[]float64{&ls.Capacity, &ls.Throughput, &ls.Utilization, &ls.QDelayMs, &ls.BacklogB, &ls.Drops} {
		*col = make([]float64, n)
	}
	for i := range t {
		ls.Capacity[i], ls.Throughput[i], ls.Utilization[i] = 10e6, 9.9e6, 0.99
	}
	r.Links = append(r.Links, ls)
	return r
}

func TestPlotsCarrySeriesAxesAndLabels(t *testing.T) {
	dir := t.TempDir()
	if err := WriteRun(dir, dumbbellRun()); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "rate.svg"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	// Title, axis labels, every legend entry, the dashed capacity line and
	// round tick labels on both axes.
	for _, want := range []string{">ns3-dumbbell: rate per flow<", ">time (s)<", ">Mbit/s<", ">f0<", ">f5<",
		">capacity bottleneck<", `stroke-dasharray="4,3"`, ">90<", ">10<"} {
		if !strings.Contains(s, want) {
			t.Errorf("rate.svg lacks %q", want)
		}
	}
	// One path per line (six flows and capacity) plus a legend thumbnail
	// for each; a line has at most maxPoints points.
	if n := strings.Count(s, `stroke-width="1.2"`); n != 14 {
		t.Errorf("rate.svg has %d series paths and thumbnails, want 14", n)
	}
	for _, base := range []string{"rate", "delay"} {
		data, err := os.ReadFile(filepath.Join(dir, base+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s.png: %v", base, err)
		}
		if b := img.Bounds(); b.Dx() != 864 || b.Dy() != 432 {
			t.Errorf("%s.png is %v, want 864x432", base, b)
		}
		// Every flow's colour is somewhere in the picture.
		for i := 0; i < 6; i++ {
			if !hasColor(img, paletteColor(i)) {
				t.Errorf("%s.png: no pixel of flow %d's colour", base, i)
			}
		}
	}
}

// hasColor reports whether some pixel of img is exactly c.
func hasColor(img image.Image, c color.RGBA) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				return true
			}
		}
	}
	return false
}

func TestPlotsAreDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if err := WriteRun(dir, dumbbellRun()); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"rate.svg", "rate.png", "delay.svg", "delay.png", "flow-f0.csv", "report.md"} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes of the same run (or is empty)", f)
		}
	}
}

func TestNumMatchesShortestFormatting(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	old := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'f', -1, 64)
	}
	values := []float64{0, -0.0000001, 1e-7, 0.5e-6, 1.5, 1e6, 0.1234567, 999999999.9999996, 1e9, 1.5e9, 3e12, -42.000001, math.Inf(1), math.NaN()}
	for i := 0; i < 200000; i++ {
		scale := math.Pow(10, float64(rng.IntN(18)-6))
		x := (rng.Float64()*2 - 1) * scale
		if i%3 == 0 {
			x = math.Round(x*10) / 10 // times and whole counts are common
		}
		values = append(values, x)
	}
	for _, x := range values {
		if got, want := num(x), old(x); got != want {
			t.Fatalf("num(%v) = %q, strconv gives %q", x, got, want)
		}
	}
}

// BenchmarkWriteRun writes every file of a yardstick-sized run: summary,
// CSVs, report and the four plots.
func BenchmarkWriteRun(b *testing.B) {
	r, dir := dumbbellRun(), b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteRun(dir, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlotPNG and BenchmarkPlotSVG draw the rate plot alone.
func BenchmarkPlotPNG(b *testing.B) {
	c := ratePlot(dumbbellRun())
	b.ReportAllocs()
	for b.Loop() {
		p := newRaster()
		c.draw(p)
		if err := p.encode(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlotSVG(b *testing.B) {
	c := ratePlot(dumbbellRun())
	b.ReportAllocs()
	for b.Loop() {
		p := newSVG()
		c.draw(p)
		_ = p.bytes()
	}
}
