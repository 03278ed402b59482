//go:build !linux

package audiobridge

import "runtime"

// ownThread puts the mixer on an OS thread of its own; naming it is Linux's.
func ownThread(string) { runtime.LockOSThread() }
