package lab

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// libraryScale shortens every scenario of the library (100 s becomes 25 s)
// so that the whole library runs in seconds.
const libraryScale = 0.25

// runLibrary parses and runs every scenario file under scenarios/ at
// libraryScale, returning the summaries by entry name and sweep value.
func runLibrary(t *testing.T) map[string]map[string]metrics.Summary {
	t.Helper()
	files, err := collect([]string{filepath.Join("..", "..", "scenarios")})
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		name string
		s    *scenario.Scenario
	}
	var jobs []job
	for _, f := range files {
		parsed, err := scenario.ParseFile(f.path)
		if err != nil {
			t.Fatalf("library file does not parse: %v", err)
		}
		for _, s := range parsed.Runs {
			if canRun(EngineSim, s) != nil {
				continue // browser flows: emulation only
			}
			s.ScaleTime(libraryScale)
			jobs = append(jobs, job{f.name, s})
		}
	}
	out := map[string]map[string]metrics.Summary{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan job)
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				sm, err := j.s.Build(j.s.Seed)
				if err == nil {
					err = sm.Run()
				}
				if err != nil {
					t.Errorf("%s %s: %v", j.name, j.s.SweepValue, err)
					continue
				}
				sum := metrics.Summarize(metrics.RecordingOf(sm), metrics.Meta{Scenario: j.s.Name, Seed: j.s.Seed, SweepValue: j.s.SweepValue})
				mu.Lock()
				if out[j.name] == nil {
					out[j.name] = map[string]metrics.Summary{}
				}
				out[j.name][j.s.SweepValue] = sum
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	return out
}

func value(t *testing.T, res map[string]map[string]metrics.Summary, entry, sweep, path string) float64 {
	t.Helper()
	s, ok := res[entry][sweep]
	if !ok {
		t.Fatalf("no run %s %q", entry, sweep)
	}
	v, err := metrics.Lookup(s, path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLibraryDirections runs the whole scenario library at shortened
// durations and checks the directions the seeds and RFCs describe.
func TestLibraryDirections(t *testing.T) {
	res := runLibrary(t)

	// Seed 004: at the RFC's default RMAX (1.5 Mbit/s, 15% of the link) NADA
	// stays below its fair share against NewReno; raising RMAX lets it take
	// more.
	low := value(t, res, "seed004/nada-vs-newreno", "1.5Mbps", "flows.nada.fair_share_ratio")
	high := value(t, res, "seed004/nada-vs-newreno", "20Mbps", "flows.nada.fair_share_ratio")
	if low >= 0.5 || high <= low {
		t.Errorf("NADA vs NewReno: fair-share ratio %.3f at RMAX 1.5 Mbit/s, %.3f at 20 Mbit/s", low, high)
	}
	// Seed 004: a higher RMIN gives NADA more.
	if a, b := value(t, res, "seed004/rmin-sweep-rmax20", "150kbps", "flows.nada.throughput_bps"),
		value(t, res, "seed004/rmin-sweep-rmax20", "9.6Mbps", "flows.nada.throughput_bps"); b <= 2*a {
		t.Errorf("NADA at RMIN 9.6 Mbit/s sends %.0f bit/s, not well above %.0f at 150 kbit/s", b, a)
	}

	// Seed 002: LEDBAT yields to TCP; NewReno in its place shares instead.
	tcpVsLEDBAT := value(t, res, "seed002/ledbat", "ledbat", "flows.tcp.fair_share_ratio")
	tcpVsNewReno := value(t, res, "seed002/ledbat", "newreno", "flows.tcp.fair_share_ratio")
	if tcpVsLEDBAT < 2 || tcpVsNewReno >= tcpVsLEDBAT {
		t.Errorf("TCP's fair-share ratio %.2f against LEDBAT, %.2f against NewReno", tcpVsLEDBAT, tcpVsNewReno)
	}

	// Seed 003: GCC holds its rate at 5% loss and falls at 20% (the loss
	// controller holds between 2% and 10% and cuts above).
	for _, v := range []string{"gcc", "gcc-draft"} {
		entry := "seed003/" + v + "-loss"
		at5 := value(t, res, entry, "5%", "flows.video.goodput_bps")
		at20 := value(t, res, entry, "20%", "flows.video.goodput_bps")
		if at5 < 250e3 || at20 > 0.5*at5 {
			t.Errorf("%s: goodput %.0f bit/s at 5%% loss, %.0f at 20%%", v, at5, at20)
		}
	}

	// RFC 8867 5.1: neither controller collapses while the capacity steps
	// (compressed here to 10 s phases; the full run, TestRFC8867VariableCapacity,
	// reaches 0.77 with GCC and 0.87 with NADA).
	for _, cc := range []string{"gcc", "nada"} {
		if u := value(t, res, "rfc8867/5.1", cc, "links.bottleneck.utilization"); u < 0.4 {
			t.Errorf("RFC 8867 5.1 with %s: utilisation %.2f", cc, u)
		}
	}
}

// TestSameSeedSameResults runs one scenario twice and a third time with
// another seed: equal seeds give byte-identical summaries.
func TestSameSeedSameResults(t *testing.T) {
	run := func(seed uint64) []byte {
		f, err := scenario.ParseFile(filepath.Join("..", "..", "scenarios", "rfc8867", "5.7.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		s := f.Runs[1]
		s.ScaleTime(0.1)
		sm, err := s.Build(seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := sm.Run(); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(metrics.Summarize(metrics.RecordingOf(sm), metrics.Meta{Seed: seed}))
		return data
	}
	a, b, c := run(3), run(3), run(4)
	if string(a) != string(b) {
		t.Fatal("the same seed gave different summaries")
	}
	if string(a) == string(c) {
		t.Fatal("different seeds gave identical summaries (the seed is not used)")
	}
}
