package flows

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// IP and UDP header bytes: a scenario's packet_size is the network-layer
// size, as in the simulator, so the datagram's payload is that minus these.
const (
	udp4Header = 20 + 8
	udp6Header = 40 + 8
)

// maxLag is how far the pacer may fall behind its schedule before it gives
// up the missed packets instead of bursting them. Below it, a late packet
// and those after it go out back to back until the schedule is caught up,
// so a busy machine's scheduling delays (tens of ms with a load of 10 on
// two cores) do not lower the rate; a longer stall is logged.
const maxLag = 200 * time.Millisecond

// rxBuffer is the receiver's socket buffer: room for about a second at
// 10 Mbit/s, so a receiver descheduled for a while does not drop datagrams
// the network delivered (that loss would be the host's, not the link's).
const rxBuffer = 4 << 20

// cbrFlow sends UDP datagrams from Src to Dst at a constant rate with no
// feedback; the receiver counts what arrives.
type cbrFlow struct {
	env     endpoint.Env
	header  int           // IP+UDP bytes
	gap     time.Duration // between packets
	tx, rx  *net.UDPConn
	cancel  context.CancelFunc
	rxDone  chan struct{} // closed when the receiver's goroutine ends
	txDone  chan struct{} // closed when the sender's goroutine ends
	stopped sync.Once
	sent    atomic.Int64 // datagrams written
	skipped atomic.Int64 // datagrams given up after a stall longer than maxLag
}

// NewCBR checks a cbr flow's spec and returns the flow, not yet started.
// Rate is bit/s of network-layer packets of PacketSize bytes (default 1200,
// as in the simulator).
func NewCBR(env endpoint.Env) (endpoint.Flow, error) {
	s := env.Spec
	if s.Kind != "cbr" {
		return nil, fmt.Errorf("flow %s: kind %q is not cbr", s.Name, s.Kind)
	}
	if err := checkEnv(env); err != nil {
		return nil, err
	}
	header := udp4Header
	if !env.Dst.Addr().Is4() {
		header = udp6Header
	}
	size := s.PacketSize
	if size == 0 {
		size = 1200
	}
	if size <= header || size-header > 65507 {
		return nil, fmt.Errorf("flow %s: packet_size %d must be above the %d bytes of IP/UDP headers and at most %d",
			s.Name, size, header, 65507+header)
	}
	if s.Rate <= 0 {
		return nil, fmt.Errorf("flow %s: rate must be positive", s.Name)
	}
	env.Spec.PacketSize = size
	gap := time.Duration(float64(size) * 8 / s.Rate * float64(time.Second))
	if gap <= 0 {
		return nil, fmt.Errorf("flow %s: rate %.0f bit/s is too high for %d-byte packets", s.Name, s.Rate, size)
	}
	return &cbrFlow{env: env, header: header, gap: gap}, nil
}

// Start opens the receiver in Dst and the sender in Src and starts pacing.
func (f *cbrFlow) Start(ctx context.Context) error {
	name := f.env.Spec.Name
	err := f.env.Dst.Do(func() error {
		var err error
		lc := net.ListenConfig{Control: rcvBufControl(rxBuffer)}
		c, err := lc.ListenPacket(ctx, "udp", netip.AddrPortFrom(f.env.Dst.Addr(), 0).String())
		if err == nil {
			f.rx = c.(*net.UDPConn)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("flow %s: listen in %s: %w", name, f.env.Dst.Name(), err)
	}
	err = f.env.Src.Do(func() error {
		var err error
		f.tx, err = net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(f.env.Src.Addr(), 0)),
			f.rx.LocalAddr().(*net.UDPAddr))
		return err
	})
	if err != nil {
		f.rx.Close()
		return fmt.Errorf("flow %s: socket in %s: %w", name, f.env.Src.Name(), err)
	}
	run, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.rxDone, f.txDone = make(chan struct{}), make(chan struct{})
	go func() { defer close(f.rxDone); f.receive() }()
	go func() { defer close(f.txDone); f.send(run) }()
	return nil
}

// receive counts each datagram as its network-layer size, the unit the
// simulator's CBR goodput uses.
func (f *cbrFlow) receive() {
	buf := make([]byte, 64<<10)
	for {
		n, err := f.rx.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
			continue // a transient error (e.g. a queued ICMP report); the socket still works
		}
		f.env.Rec.Goodput(n + f.header)
	}
}

// send writes packet i at start + i·gap, sleeping between packets. Write
// errors are not fatal: with no feedback, a refused or dropped datagram is
// simply lost, as on any UDP path.
func (f *cbrFlow) send(ctx context.Context) {
	buf := make([]byte, f.env.Spec.PacketSize-f.header)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	start, sent := time.Now(), 0
	for {
		due := start.Add(time.Duration(sent) * f.gap)
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		} else if -wait > maxLag {
			f.logf("flow %s: the pacer fell %v behind; %d packets not sent", f.env.Spec.Name,
				-wait.Round(time.Millisecond), int64(-wait/f.gap))
			f.skipped.Add(int64(-wait / f.gap))
			start, sent = time.Now(), 0
		}
		if ctx.Err() != nil {
			return
		}
		if _, err := f.tx.Write(buf); errors.Is(err, net.ErrClosed) {
			return
		}
		sent++
		f.sent.Add(1)
	}
}

func (f *cbrFlow) logf(format string, args ...any) {
	if f.env.Log != nil {
		fmt.Fprintf(f.env.Log, format+"\n", args...)
	}
}

// drainFor is how long the receiver keeps reading after the sender stops:
// datagrams already queued in its socket count as delivered.
const drainFor = 20 * time.Millisecond

// Stop ends sending, lets the receiver read what has arrived, closes both
// sockets and waits for the goroutines.
func (f *cbrFlow) Stop() error {
	f.stopped.Do(func() {
		if f.cancel == nil {
			return // never started
		}
		f.cancel()
		f.tx.Close()
		<-f.txDone
		_ = f.rx.SetReadDeadline(time.Now().Add(drainFor))
		<-f.rxDone
		f.rx.Close()
	})
	return nil
}
