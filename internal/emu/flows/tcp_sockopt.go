package flows

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// tsOption is the TCP timestamp option's size, which Linux takes out of
// TCP_MAXSEG to get the payload per segment (timestamps are on by default
// in every namespace).
const tsOption = 12

// writeSysctl sets net.ipv4.NAME in h's namespace: /proc/sys/net shows the
// namespace of the thread that opens it, and Do runs on a thread inside h.
func writeSysctl(h endpoint.Host, name, value string) error {
	path := "/proc/sys/net/ipv4/" + name
	err := h.Do(func() error { return os.WriteFile(path, []byte(value), 0) })
	if err != nil {
		return fmt.Errorf("sysctl net.ipv4.%s=%s in %s: %w", name, value, h.Name(), err)
	}
	return nil
}

// rcvBufControl sets SO_RCVBUF(FORCE) on a listening socket before it
// listens; rwnd 0 leaves Linux's autotuning alone.
func rcvBufControl(rwnd int) func(string, string, syscall.RawConn) error {
	if rwnd == 0 {
		return nil
	}
	return func(_, _ string, rc syscall.RawConn) error {
		return rawControl(rc, func(fd int) error {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rwnd); err != nil {
				return fmt.Errorf("SO_RCVBUFFORCE %d: %w", rwnd, err)
			}
			return nil
		})
	}
}

// senderControl sets the congestion control and the segment size on the
// sender's socket before it connects.
func senderControl(cc string, mss int) func(string, string, syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		return rawControl(rc, func(fd int) error {
			if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); err != nil {
				return fmt.Errorf("TCP_CONGESTION %s (is the tcp_%s module available?): %w", cc, cc, err)
			}
			if mss == 0 {
				return nil
			}
			if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_MAXSEG, mss+tsOption); err != nil {
				return fmt.Errorf("TCP_MAXSEG %d: %w", mss+tsOption, err)
			}
			return nil
		})
	}
}

// rawControl runs fn on a raw socket's descriptor.
func rawControl(rc syscall.RawConn, fn func(fd int) error) error {
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// connControl runs fn on a connection's descriptor.
func connControl(c syscall.Conn, fn func(fd int) error) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	return rawControl(rc, fn)
}

// congestion reads back the socket's congestion control module.
func congestion(c *net.TCPConn) (string, error) {
	var name string
	err := connControl(c, func(fd int) error {
		var err error
		name, err = unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
		return err
	})
	return strings.TrimRight(name, "\x00"), err
}

// tcpInfo reads the socket's TCP_INFO.
func tcpInfo(c *net.TCPConn) (*unix.TCPInfo, error) {
	var info *unix.TCPInfo
	err := connControl(c, func(fd int) error {
		var err error
		info, err = unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		return err
	})
	return info, err
}

// setQuickAck makes the receiver ACK at once until Linux leaves quick-ACK
// mode again on its own (the flag is not sticky).
func setQuickAck(c *net.TCPConn) error {
	return connControl(c, func(fd int) error {
		return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
	})
}

// drainPoll is how often a finished on/off file's send queue is checked.
const drainPoll = 5 * time.Millisecond

// waitDrained returns once everything written has been ACKed (SIOCOUTQ
// counts unsent plus unacknowledged bytes) or ctx ends.
func waitDrained(ctx context.Context, c *net.TCPConn) error {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		var queued int
		err := connControl(c, func(fd int) error {
			var err error
			queued, err = unix.IoctlGetInt(fd, unix.SIOCOUTQ)
			return err
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("sender: SIOCOUTQ: %w", err)
		case queued == 0:
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
