package netem

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OpenTUN creates a TUN device (IP packets, no packet-information header) in
// the calling thread's network namespace and returns it open for reading and
// writing. The device lives as long as the file: closing it, or the process
// dying, removes it, so a killed emulation leaves no device behind.
func OpenTUN(name string) (*os.File, error) {
	if len(name) >= unix.IFNAMSIZ {
		return nil, fmt.Errorf("tun name %q longer than %d bytes", name, unix.IFNAMSIZ-1)
	}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	var req struct {
		name  [unix.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(req.name[:], name)
	req.flags = unix.IFF_TUN | unix.IFF_NO_PI
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&req))); errno != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, errno)
	}
	// A non-blocking descriptor joins Go's poller, so Close unblocks a reader.
	return os.NewFile(uintptr(fd), "/dev/net/tun:"+name), nil
}
