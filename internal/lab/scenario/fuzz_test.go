package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/sim"
)

func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add(good + "\nsweep: {param: links.bottleneck.queue, values: [10pkt, 20ms]}\n")
	f.Add(strings.ReplaceAll(good, "100Mbps", "100"))
	f.Add("duration: 1s\nlinks: [{name: a, from: x, to: y, rate: 1Mbps, duplex: true}]\nflows: [{name: f, cc: gcc, path: [x, y]}]\n")
	f.Add("duration: 1s\nlinks: [{name: a, from: x, to: y, rate: 1Mbps, duplex: true}]\n" +
		"flows: [{name: b, kind: browser, receiver: echotest, video: {width: 640, height: 480, fps: 25, max_rate: 1Mbps}, path: [x, y]}]\n")
	f.Add("duration: 1s\nlinks: [{name: a, from: x, to: y, rate: 1Mbps, duplex: true}]\n" +
		"flows: [{name: v, cc: gcc, path: [x, y], codec: {model: libvpx, width: 640, height: 360, content: noise}}]\n")
	f.Add("duration: 1s\nlinks: [{name: a, from: x, to: y, rate: 1Mbps, duplex: true}]\n" +
		"flows: [{name: v, cc: gcc, path: [x, y], codec: {model: libvpx, width: 640, height: 360, adapt: false}}]\n")
	f.Add("a: &x [*x]\n")
	f.Add("duration: 1s\nlinks: &l [{name: a, from: x, to: y, rate: 1Mbps}]\nflows: *l\n")
	f.Fuzz(func(t *testing.T, doc string) {
		file, err := Parse("fuzz.yaml", []byte(doc))
		if err != nil {
			if file != nil {
				t.Fatal("a file with errors must yield no runs")
			}
			return
		}
		for _, s := range file.Runs {
			if _, err := s.Build(1); err != nil && !errors.Is(err, ErrBrowserNeedsEmulation) &&
				!errors.Is(err, ErrBrowserSubscriberNeedsEmulation) && !errors.Is(err, sim.ErrLibvpxNeedsEmulation) {
				t.Fatalf("parsed scenario does not build: %v", err)
			}
		}
	})
}
