package sampler

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ThreadsCPU sums the threads of a name: a thread named "mixer test" that burns CPU is counted,
// and no thread matches another prefix.
func TestThreadsCPUCountsNamedThreads(t *testing.T) {
	done := make(chan struct{})
	named := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		comm := "/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/comm"
		if err := os.WriteFile(comm, []byte("mixer test"), 0); err != nil {
			t.Error(err)
		}
		close(named)
		x := 0
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); x++ {
		}
		_ = x
		<-done
		_ = os.WriteFile(comm, []byte("worker"), 0)
	}()
	<-named
	time.Sleep(400 * time.Millisecond)
	got, err := ThreadsCPU(os.Getpid(), MixerThreadPrefix)
	close(done)
	if err != nil || got < 100*time.Millisecond {
		t.Fatalf("the mixer thread's CPU: %v, %v; want the 300 ms it burnt", got, err)
	}
	if none, _ := ThreadsCPU(os.Getpid(), "no such thread"); none != 0 {
		t.Fatalf("threads of another name: %v", none)
	}
}
