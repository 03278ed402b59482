// Package netns runs code inside a named network namespace (`ip netns add NAME`) from a Go
// process that stays in its own.
package netns

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Dir is where `ip netns` keeps its named namespaces.
const Dir = "/var/run/netns"

// Do runs f on an OS thread switched into namespace name. Sockets and devices f creates belong
// to that namespace; processes f starts inherit it. f runs on a goroutine of its own, locked to
// its thread: should switching back fail, that goroutine ends with its thread still locked and the
// runtime discards the thread, so no other code ever runs in the wrong namespace.
func Do(name string, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- do(name, f) }()
	return <-done
}

func do(name string, f func() error) error {
	target, err := os.Open(Dir + "/" + name)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("setns %s: %w", name, err)
	}
	ferr := f()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns back from %s: %w", name, err) // the thread dies with this goroutine
	}
	runtime.UnlockOSThread()
	return ferr
}
