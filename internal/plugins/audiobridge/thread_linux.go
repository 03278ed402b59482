package audiobridge

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ownThread puts the calling goroutine (a room's mixer) on an OS thread of its own, named as
// Janus names its mixer threads ("mixer <room>", at most 15 bytes), so that the mixing CPU of
// either server is read the same way: per thread, from /proc. The goroutine never unlocks: when
// it returns, the runtime ends the thread with it.
func ownThread(name string) {
	runtime.LockOSThread()
	b := make([]byte, 16)
	copy(b[:15], name)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}
