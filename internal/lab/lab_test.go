package lab

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const smallScenario = `name: small
description: Two flows on a small dumbbell.
reference: none
duration: 20s
links:
  - {name: bottleneck, from: a, to: b, rate: 2Mbps, delay: 20ms, queue: 50pkt, duplex: true}
flows:
  - {name: video, cc: nada, path: [a, b]}
  - {name: bulk, cc: cubic, path: [a, b], start: 5s}
sweep:
  param: links.bottleneck.queue
  values: [20pkt, 80pkt]
  metric: flows.video.fair_share_ratio
`

func writeScenario(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tree reads every file under dir.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRunWritesEverythingDeterministically(t *testing.T) {
	tmp := t.TempDir()
	file := writeScenario(t, tmp, "small.yaml", smallScenario)
	var outs []map[string][]byte
	for _, out := range []string{"out1", "out2"} {
		var stdout, stderr bytes.Buffer
		dir := filepath.Join(tmp, out)
		if code := Main([]string{"run", file, "--out", dir, "--jobs", "2"}, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "lab: [2/2]") {
			t.Errorf("no line-based progress on a non-terminal: %q", stderr.String())
		}
		outs = append(outs, tree(t, dir))
	}
	want := []string{"report.md", "sweep.json", "sweep.csv", "sweep.png", "sweep.svg"}
	for _, v := range []string{"20pkt", "80pkt"} {
		for _, f := range []string{"summary.json", "report.md", "rate.png", "rate.svg", "delay.png", "delay.svg",
			"flow-video.csv", "flow-bulk.csv", "link-bottleneck.csv", "link-bottleneck-rev.csv"} {
			want = append(want, filepath.Join(v, f))
		}
	}
	for _, f := range want {
		if len(outs[0][f]) == 0 {
			t.Errorf("missing or empty %s", f)
		}
	}
	if len(outs[0]) != len(outs[1]) {
		t.Fatalf("runs wrote %d and %d files", len(outs[0]), len(outs[1]))
	}
	for name, data := range outs[0] {
		if !bytes.Equal(data, outs[1][name]) {
			t.Errorf("%s differs between two runs of the same scenario and seed", name)
		}
	}
	// summary.json carries the fields the issue lists.
	var s map[string]any
	if err := json.Unmarshal(outs[0][filepath.Join("80pkt", "summary.json")], &s); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenario", "engine", "seed", "duration_s", "flows", "links", "jain_index"} {
		if _, ok := s[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	if s["engine"] != "sim" || s["duration_s"] != 20.0 {
		t.Errorf("engine %v duration %v", s["engine"], s["duration_s"])
	}
	flow := s["flows"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "kind", "throughput_bps", "fair_share_ratio", "loss_ratio", "queue_delay_ms", "rampup_s"} {
		if _, ok := flow[k]; !ok {
			t.Errorf("flow lacks %q", k)
		}
	}
	qd := flow["queue_delay_ms"].(map[string]any)
	if _, ok := qd["p95"]; !ok {
		t.Error("queue_delay_ms lacks p95")
	}
	link := s["links"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "utilization", "drops"} {
		if _, ok := link[k]; !ok {
			t.Errorf("link lacks %q", k)
		}
	}
	csv := string(outs[0][filepath.Join("20pkt", "flow-video.csv")])
	if !strings.HasPrefix(csv, "time_s,rate_bps,") || strings.Count(csv, "\n") != 201 {
		t.Errorf("flow CSV has %d lines: %.80q", strings.Count(csv, "\n"), csv)
	}
}

// TestSuiteRefusesYAMLThatIsNotAScenario: a directory run parses every YAML file in it, so a
// stray file (a network controller's topology, say) is an error naming it, and nothing runs.
func TestSuiteRefusesYAMLThatIsNotAScenario(t *testing.T) {
	tmp := t.TempDir()
	suite := filepath.Join(tmp, "suite")
	_ = os.MkdirAll(suite, 0o755)
	writeScenario(t, suite, "one.yaml", strings.Split(smallScenario, "sweep:")[0])
	writeScenario(t, suite, "topology.yaml", "name: topo\nnodes: [a, b]\n")
	out := filepath.Join(tmp, "out")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", suite, "--out", out}, &stdout, &stderr); code == 0 {
		t.Fatal("a suite with a stray YAML file ran")
	}
	if !strings.Contains(stderr.String(), "topology.yaml:2") || !strings.Contains(stderr.String(), "nodes") {
		t.Errorf("error does not name the file, line and field: %s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
		t.Error("results were written although the suite had an error")
	}
}

func TestSeedOverrideAndSuite(t *testing.T) {
	tmp := t.TempDir()
	suite := filepath.Join(tmp, "suite")
	_ = os.MkdirAll(filepath.Join(suite, "more"), 0o755)
	writeScenario(t, suite, "one.yaml", strings.Split(smallScenario, "sweep:")[0])
	writeScenario(t, filepath.Join(suite, "more"), "two.yaml", strings.Replace(smallScenario, "name: small", "name: other", 1))
	out := filepath.Join(tmp, "out")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", suite, "--out", out, "--seed", "42", "--scale", "0.5"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var all []map[string]any
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &all); err != nil || len(all) != 3 {
		t.Fatalf("combined summary has %d runs (%v)", len(all), err)
	}
	for _, s := range all {
		if s["seed"] != 42.0 || s["duration_s"] != 10.0 {
			t.Errorf("seed %v duration %v", s["seed"], s["duration_s"])
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"## small", "## other: sweep of links.bottleneck.queue", "one/rate.svg", "more/two/20pkt/report.md"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("combined report lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "more", "two", "80pkt", "summary.json")); err != nil {
		t.Error(err)
	}
}

func TestBadInputRunsNothing(t *testing.T) {
	tmp := t.TempDir()
	good := writeScenario(t, tmp, "good.yaml", smallScenario)
	bad := writeScenario(t, tmp, "bad.yaml", strings.Replace(smallScenario, "rate: 2Mbps", "rate: 2", 1))
	out := filepath.Join(tmp, "out")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", good, bad, "--out", out}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stderr.String(), "bad.yaml:6: links[bottleneck].rate: missing unit") {
		t.Errorf("stderr %q", stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an output directory was written although the input had errors")
	}
	if code := Main([]string{"check", bad}, &stdout, &stderr); code != 1 {
		t.Errorf("check exit %d", code)
	}
	if code := Main([]string{"run"}, &stdout, &stderr); code != 2 {
		t.Errorf("run without a path: exit %d", code)
	}
	if code := Main([]string{"frobnicate"}, &stdout, &stderr); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	stdout.Reset()
	if code := Main([]string{"controllers"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "nada (media flows)") {
		t.Errorf("controllers: %d %q", code, stdout.String())
	}
}

func TestResultsDocumentKeepsProse(t *testing.T) {
	tmp := t.TempDir()
	doc := filepath.Join(tmp, "RESULTS.md")
	_ = os.WriteFile(doc, []byte("# Results\n\nProse before.\n\n<!-- lab:small -->\nstale\n<!-- /lab:small -->\n\nProse after.\n"), 0o644)
	file := writeScenario(t, tmp, "small.yaml", smallScenario)
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", file, "--out", filepath.Join(tmp, "out"), "--scale", "0.25", "--results", doc}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, _ := os.ReadFile(doc)
	s := string(data)
	if strings.Contains(s, "stale") || !strings.Contains(s, "Prose before.") || !strings.Contains(s, "Prose after.") ||
		!strings.Contains(s, "| links.bottleneck.queue |") {
		t.Errorf("results document:\n%s", s)
	}
}
