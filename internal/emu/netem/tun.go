package netem

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TUN is a TUN device (IP packets, no packet-information header). Its reads
// block in the kernel on the calling thread rather than in Go's poller, so a
// reader on a real-time thread of its own wakes as soon as a packet arrives.
// The device lives as long as the TUN: closing it, or the process dying,
// removes it, so a killed emulation leaves no device behind.
type TUN struct {
	name    string
	fd      int
	wake    int          // eventfd: Close wakes a blocked Read through it
	mu      sync.RWMutex // Read and Write share it; Close takes it whole
	closing atomic.Bool
}

// OpenTUN creates a TUN device in the calling thread's network namespace.
func OpenTUN(name string) (*TUN, error) {
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
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &TUN{name: name, fd: fd, wake: wake}, nil
}

// Name is the device's name.
func (t *TUN) Name() string { return t.name }

// Read waits for the next packet; it returns io.EOF once the TUN is closed.
func (t *TUN) Read(b []byte) (int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	fds := []unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLIN}, {Fd: int32(t.wake), Events: unix.POLLIN}}
	for {
		if t.closing.Load() {
			return 0, io.EOF
		}
		n, err := unix.Read(t.fd, b)
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			return 0, err
		}
		if _, err := unix.Ppoll(fds, nil, nil); err != nil && !errors.Is(err, unix.EINTR) {
			return 0, err
		}
	}
}

// Write hands one packet to the kernel, which routes it from the device.
func (t *TUN) Write(b []byte) (int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closing.Load() {
		return 0, io.ErrClosedPipe
	}
	return unix.Write(t.fd, b)
}

// Close wakes a blocked reader and removes the device.
func (t *TUN) Close() error {
	if t.closing.Swap(true) {
		return nil
	}
	var one [8]byte
	one[0] = 1 // eventfd counters are host-endian; any nonzero value wakes
	_, _ = unix.Write(t.wake, one[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	return errors.Join(unix.Close(t.fd), unix.Close(t.wake))
}
