package wsapi

import (
	"crypto/tls"
	"io"
	"net"
	"time"
)

// A client that reads nothing must still get the close frame that says why it was cut off. A
// close frame queued behind messages the client never takes is lost if the socket's send buffer
// is full: the write blocks, and the TCP connection ends with no code (1006 in browsers). So the
// writer keeps at most inFlightMax bytes in the socket that the client's TCP has not acknowledged
// (on Linux, where the kernel tells: SIOCOUTQ), in a send buffer fixed well above that: whatever
// happens, the close frame fits, and a client that reads again later finds its replies and then
// the code.
const (
	// inFlightMax bounds the bytes the client has not acknowledged; a message waits while it would
	// go over (a message alone is always written).
	inFlightMax = 128 << 10
	// sendBuffer is the socket's send buffer (the kernel doubles it for its bookkeeping).
	sendBuffer = 4 * inFlightMax
	// roomPoll is how often a writer waiting for room looks again.
	roomPoll = 10 * time.Millisecond
	// closeLinger is how long a cut-off client's socket is kept half-closed, its input discarded.
	closeLinger = 30 * time.Second
)

// tcpOf is the TCP connection under a WebSocket's connection (nil for another kind).
func tcpOf(c net.Conn) *net.TCPConn {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	tc, _ := c.(*net.TCPConn)
	return tc
}

// fixSendBuffer sizes the socket's send buffer so that the unacknowledged bytes the writer allows
// always leave room for a close frame. It reports whether the writer can count those bytes.
func fixSendBuffer(tc *net.TCPConn) bool {
	if tc == nil {
		return false
	}
	if _, ok := unsentBytes(tc); !ok {
		return false
	}
	return tc.SetWriteBuffer(sendBuffer) == nil
}

// waitRoom waits until n more bytes fit under inFlightMax. It returns false when the client took
// nothing (no acknowledgement) for timeout, or stop or gone closed.
func waitRoom(tc *net.TCPConn, n int, timeout time.Duration, stop, gone <-chan struct{}) bool {
	last, since := -1, time.Now()
	for {
		unsent, ok := unsentBytes(tc)
		if !ok || unsent == 0 || unsent+n <= inFlightMax {
			return true
		}
		if unsent != last {
			last, since = unsent, time.Now() // the client took some
		} else if time.Since(since) >= timeout {
			return false
		}
		select {
		case <-time.After(roomPoll):
		case <-stop:
			return false
		case <-gone:
			return false
		}
	}
}

// lingerClose ends a cut-off client's connection without losing what it has not read yet. Closing
// a socket whose input was not all read makes the kernel reset the connection, and a reset throws
// away what the client's side had received but not read: its replies and the close frame. So the
// socket only stops sending (FIN after the queued bytes) and its input is read and discarded until
// the client closes too, or for closeLinger.
func lingerClose(tc *net.TCPConn) {
	if tc.CloseWrite() != nil {
		_ = tc.Close()
		return
	}
	go func() {
		_ = tc.SetReadDeadline(time.Now().Add(closeLinger))
		_, _ = io.Copy(io.Discard, tc)
		_ = tc.Close()
	}()
}
