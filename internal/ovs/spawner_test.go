package ovs_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/ovs/ovstest"
)

// TestDaemonsOutliveTheThreadThatRestartedThem: the daemons carry a parent-death signal, which
// Linux sends when the thread that forked them exits. Restart from a goroutine that then ends
// with its thread locked (Go ends that thread): the switch must keep running and answering.
func TestDaemonsOutliveTheThreadThatRestartedThem(t *testing.T) {
	nw := ovstest.New(t, 0)
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime ends this thread with the goroutine
		errc <- nw.Switch.Restart(ctx)
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the thread's exit, and a signal's delivery, are quick
	pid := nw.Switch.VswitchdPID()
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("ovs-vswitchd (pid %d) did not survive the thread that restarted it", pid)
	}
	if _, err := nw.Switch.Client().DumpFlows(ctx); err != nil {
		t.Fatalf("the switch does not answer after its starter's thread ended: %v", err)
	}
}
