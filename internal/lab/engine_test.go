package lab

import (
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// A suite leaves out the files an engine cannot run, saying why; a file
// given alone is an error naming the flow and what to do.
func TestRunnableSkipsWhatTheEngineCannotRun(t *testing.T) {
	file := func(name, kind string) scenarioFile {
		s := &scenario.Scenario{Name: name, Flows: []scenario.Flow{{Name: "f", Kind: kind}}}
		return scenarioFile{path: name + ".yaml", name: name, parsed: &scenario.File{Runs: []*scenario.Scenario{s}}}
	}
	files := []scenarioFile{file("tcp", scenario.KindTCP), file("chrome", scenario.KindBrowser), file("ledbat", scenario.KindLEDBAT),
		file("pigeon", "pigeon")}
	keep, skipped, err := runnable(files, EngineSim, true)
	if err != nil || len(keep) != 3 || len(skipped) != 1 || !strings.Contains(skipped[0], "run only in emulation: strata lab run --engine emu") {
		t.Fatalf("sim suite: keep %d, skipped %q, err %v", len(keep), skipped, err)
	}
	keep, skipped, err = runnable(files, EngineEmu, true)
	if err != nil || len(keep) != 3 || len(skipped) != 1 || !strings.Contains(strings.Join(skipped, "\n"), "pigeon: flow f: kind pigeon cannot run in emulation") {
		t.Fatalf("emu suite: keep %d, skipped %q, err %v", len(keep), skipped, err)
	}
	if _, _, err := runnable(files[1:2], EngineSim, false); err == nil || !strings.Contains(err.Error(), "chrome.yaml: flow f: browser flows run only in emulation") {
		t.Fatalf("a browser file alone under the simulator: %v", err)
	}
}

// --only keeps the named entries and everything below a named directory.
func TestOnly(t *testing.T) {
	var files []scenarioFile
	for _, n := range []string{"seed004/a", "seed004/b", "seed0040/c", "rfc8867/5.1", "rfc8867/5.2"} {
		files = append(files, scenarioFile{name: n})
	}
	var got []string
	for _, f := range only(files, []string{"seed004/", "rfc8867/5.2"}) {
		got = append(got, f.name)
	}
	if strings.Join(got, " ") != "seed004/a seed004/b rfc8867/5.2" {
		t.Fatalf("kept %v", got)
	}
	if len(only(files, nil)) != len(files) {
		t.Fatal("no names must keep everything")
	}
}
