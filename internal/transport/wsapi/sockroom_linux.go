package wsapi

import (
	"net"

	"golang.org/x/sys/unix"
)

// unsentBytes is how many bytes written to the socket its peer has not acknowledged yet.
func unsentBytes(tc *net.TCPConn) (int, bool) {
	raw, err := tc.SyscallConn()
	if err != nil {
		return 0, false
	}
	n, ierr := 0, error(nil)
	if err := raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}
