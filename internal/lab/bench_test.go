package lab

import (
	"path/filepath"
	"testing"
)

// BenchmarkRunNS3Dumbbell is `strata lab run scenarios/examples/ns3-dumbbell.yaml`
// inside the process (everything but start-up): parsing, the 100 s
// simulation, metrics, and every file of the run. Its CPU profile
// (-cpuprofile) shows where a run's time goes; the bench's lab-speed
// scenario times the whole process against ns-3.
func BenchmarkRunNS3Dumbbell(b *testing.B) {
	file := filepath.Join("..", "..", "scenarios", "examples", "ns3-dumbbell.yaml")
	out := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run([]string{file}, Options{Out: out}); err != nil {
			b.Fatal(err)
		}
	}
}
