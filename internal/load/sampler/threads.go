package sampler

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// MixerThreadPrefix names the threads that mix audio in both servers the bench compares: Janus's
// audio bridge runs a thread "mixer <room>" per room and one "mixer <room> <participant>" per
// participant (which encodes that participant's mix); strata's runs each room's mixer on a thread
// of its own named "mixer <room>". Their CPU is the "mixing CPU" of seed 001's stress test.
const MixerThreadPrefix = "mixer"

// ThreadsCPU sums the CPU time (user + system) of pid's threads whose name starts with prefix.
func ThreadsCPU(pid int, prefix string) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("sampler: no threads of %d", pid)
	}
	var sum time.Duration
	for _, t := range tasks {
		comm, err := os.ReadFile(filepath.Join(t, "comm"))
		if err != nil || !bytes.HasPrefix(comm, []byte(prefix)) {
			continue // a thread that ended, or another one
		}
		b, err := os.ReadFile(filepath.Join(t, "stat"))
		if err != nil {
			continue
		}
		st, err := ParseStat(b)
		if err != nil {
			continue
		}
		sum += st.CPU
	}
	return sum, nil
}
