package topo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-rtc/strata/internal/emu/netem"
)

// Probes are UDP packets carrying a sequence number and their send time; the
// receiver stamps them with the kernel's receive time. Sender and receiver
// share this machine's clock, so one-way delays are measured directly.

// probeHeader is the IP and UDP headers' size: a probe's size on the wire
// (network layer) is its payload plus this.
const probeHeader = 28

const probePayloadMin = 12 // sequence number + send time

type probeRec struct {
	seq        uint32
	sent, recv int64 // wall clock, ns (the kernel stamps receive times with it)
	wire       int   // network-layer bytes
	tos        uint8
}

func (r probeRec) owd() time.Duration { return time.Duration(r.recv - r.sent) }

type probeReceiver struct {
	conn *net.UDPConn
	mu   sync.Mutex
	recs []probeRec
	done chan struct{}
}

// listenProbes opens a probe receiver in h on port.
func listenProbes(h *Host, port int) (*probeReceiver, error) {
	var c *net.UDPConn
	err := h.Do(func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{Port: port})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("probe receiver in %s: %w", h.name, err)
	}
	raw, err := c.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			err = errors.Join(unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1),
				unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1),
				unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20))
		})
		err = errors.Join(err, cerr)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("probe receiver options: %w", err)
	}
	r := &probeReceiver{conn: c, done: make(chan struct{})}
	go r.run()
	return r, nil
}

func (r *probeReceiver) run() {
	defer close(r.done)
	buf, oob := make([]byte, 65536), make([]byte, 256)
	for {
		n, oobn, _, _, err := r.conn.ReadMsgUDP(buf, oob)
		if err != nil {
			return
		}
		if n < probePayloadMin {
			continue
		}
		rec := probeRec{seq: binary.BigEndian.Uint32(buf), sent: int64(binary.BigEndian.Uint64(buf[4:])),
			wire: n + probeHeader, recv: time.Now().UnixNano()}
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		for _, m := range msgs {
			switch {
			case m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= 16:
				// struct timespec: two native-endian 64-bit words.
				rec.recv = int64(binary.NativeEndian.Uint64(m.Data))*1e9 + int64(binary.NativeEndian.Uint64(m.Data[8:]))
			case m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) >= 1:
				rec.tos = m.Data[0]
			}
		}
		r.mu.Lock()
		r.recs = append(r.recs, rec)
		r.mu.Unlock()
	}
}

// stop closes the receiver and returns what it received, in arrival order.
func (r *probeReceiver) stop() []probeRec {
	r.conn.Close()
	<-r.done
	return r.recs
}

// probeSender sends probes from a host.
type probeSender struct {
	conn *net.UDPConn
	seq  uint32
	buf  []byte
}

func newProbeSender(h *Host, dst *Host, port, payload int, tos int) (*probeSender, error) {
	var c *net.UDPConn
	err := h.Do(func() (err error) {
		c, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: dst.addr.AsSlice(), Port: port})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("probe sender in %s: %w", h.name, err)
	}
	if tos != 0 {
		raw, _ := c.SyscallConn()
		_ = raw.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, tos) })
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("IP_TOS: %w", err)
		}
	}
	return &probeSender{conn: c, buf: make([]byte, max(payload, probePayloadMin))}, nil
}

// send sends one probe; a full socket buffer (ENOBUFS) loses it, as a
// bottleneck would.
func (s *probeSender) send() {
	binary.BigEndian.PutUint32(s.buf, s.seq)
	binary.BigEndian.PutUint64(s.buf[4:], uint64(time.Now().UnixNano()))
	s.seq++
	_, _ = s.conn.Write(s.buf)
}

// paced sends count probes at bps (network-layer bits per second), or
// forever when count is 0, until stop is set. It paces on a real-time thread
// of its own, as the links run, so the load it offers is the one asked for
// on a busy machine too.
func (s *probeSender) paced(bps float64, count int, stop *atomic.Bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		netem.Realtime() // the thread ends with this goroutine
		gap := time.Duration(float64(len(s.buf)+probeHeader) * 8 / bps * 1e9)
		start := time.Now()
		for i := 0; (count == 0 || i < count) && !stop.Load(); i++ {
			if wait := time.Until(start.Add(time.Duration(i) * gap)); wait > 0 {
				netem.Sleep(wait)
			}
			s.send()
		}
	}()
	<-done
}

func (s *probeSender) close() { s.conn.Close() }
