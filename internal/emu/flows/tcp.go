// Package flows runs a scenario's flows on real endpoints inside the
// emulator's namespaces: kernel TCP (tcp.go), paced UDP (cbr.go) and
// strata's Pion media sender (media*.go).
package flows

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/sim"
)

// kernelCC maps a scenario's TCP controller to the Linux congestion control
// module set on the sender's socket with TCP_CONGESTION. Linux has a single
// Reno module, and its loss recovery is NewReno's (RFC 6582: partial ACKs
// keep the sender in recovery), with SACK-based recovery (RFC 6675) on top
// unless SACK is off; so both `reno` and `newreno` run Linux's reno. The
// simulator's cc/tcp keeps the two apart; the emulator cannot.
var kernelCC = map[string]string{
	"reno":    "reno",
	"newreno": "reno",
	"cubic":   "cubic",
	"bbr":     "bbr",
}

// The scenario's mss range in emulation: Linux takes TCP_MAXSEG from 88
// (TCP_MIN_MSS), which is mss+12 with timestamps; the links' 1500-byte MTU
// holds 1448 bytes of payload after 52 of IP, TCP and timestamp headers.
const (
	minMSS = 88 - tsOption
	maxMSS = 1500 - 52
)

// sampleEvery is how often the sender's TCP_INFO is read for cwnd and RTT.
const sampleEvery = 100 * time.Millisecond

// tcpFlow is a kernel TCP connection from Src to Dst: the sender writes
// (forever, or on/off files) and the receiver reads and counts goodput.
//
// Scenario options and what Linux does with them:
//   - cc: TCP_CONGESTION on the sender's socket (see kernelCC); read back
//     after connecting, so a module the kernel lacks is an error.
//   - sack: false sets net.ipv4.tcp_sack=0 in both hosts' namespaces (hosts
//     are per flow, so this is per flow); ecn: true sets net.ipv4.tcp_ecn=1
//     in both (the sender asks for ECN in its SYN, the receiver agrees).
//   - mss: TCP_MAXSEG on the sender before connecting. The scenario's mss is
//     payload per segment, as in the simulator; TCP_MAXSEG excludes TCP
//     options and Linux subtracts the 12-byte timestamp option from it, so
//     the socket gets mss+12 and tcpi_snd_mss reads back mss.
//   - rwnd: SO_RCVBUF on the receiver's listening socket (inherited by the
//     accepted one, and in force before the SYN so the window scale fits).
//     Linux doubles the value it is given to cover its own bookkeeping and
//     advertises only the part of the buffer it expects payload to fill
//     (about half), so the advertised window is about rwnd. Setting it turns
//     receive-buffer autotuning off. SO_RCVBUFFORCE is used so that
//     net.core.rmem_max does not cap it (the emulator runs as root).
//   - delayed_ack: Linux has no ACK-every-N setting. Its receiver ACKs
//     every second full-sized segment, at once in quick-ACK mode (start of a
//     connection, after out-of-order data), and otherwise after its delayed
//     ACK timer (40–200 ms, adapted to the inter-arrival time). For
//     delayed_ack: 1 the receiver sets TCP_QUICKACK after every read (Linux
//     clears it again on its own), so most segments are ACKed (0.78–0.94
//     ACKs per data segment measured, against 0.49 without); unset, 2 or
//     more leave Linux's own behaviour. The simulator's default is one ACK
//     per segment; Linux's cwnd growth counts segments ACKed, not ACKs, so
//     the difference shows in ACK traffic more than in the window.
//   - onoff: file sizes and idle periods from sim.OnOffSource, the
//     simulator's generator with the same seed and flow name, drawn in the
//     same order. A file ends when the kernel's send queue is empty
//     (SIOCOUTQ = 0: everything written has been ACKed), as the simulator
//     ends it at the last ACK. Linux restarts the window after an idle
//     longer than the RTO (tcp_slow_start_after_idle).
type tcpFlow struct {
	env     endpoint.Env
	cc      string // Linux module name
	onoff   *sim.OnOffSource
	snd     *net.TCPConn
	rcv     *net.TCPConn
	run     context.Context // ends when Stop begins
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped sync.Once
	files   atomic.Int64 // completed on/off files
	errMu   sync.Mutex
	err     error // first failure while running, returned by Stop
}

// NewTCP checks a tcp flow's spec and returns the flow, not yet started.
func NewTCP(env endpoint.Env) (endpoint.Flow, error) {
	s := env.Spec
	if s.Kind != "" && s.Kind != "tcp" {
		return nil, fmt.Errorf("flow %s: kind %q is not kernel TCP", s.Name, s.Kind)
	}
	cc, ok := kernelCC[s.CC]
	if !ok {
		return nil, fmt.Errorf("flow %s: congestion control %q has no Linux equivalent (kernel TCP runs reno, newreno, cubic, bbr)",
			s.Name, s.CC)
	}
	if len(s.Params) > 0 {
		return nil, fmt.Errorf("flow %s: kernel TCP takes no controller params (the %s module has no per-socket settings)",
			s.Name, cc)
	}
	if s.MSS != 0 && (s.MSS < minMSS || s.MSS > maxMSS) {
		return nil, fmt.Errorf("flow %s: mss %d: kernel TCP over the emulator's 1500-byte MTU carries %d..%d payload bytes per segment",
			s.Name, s.MSS, minMSS, maxMSS)
	}
	if s.RcvWindow < 0 || s.RcvWindow > 1<<30 {
		return nil, fmt.Errorf("flow %s: rwnd %d out of range", s.Name, s.RcvWindow)
	}
	if err := checkEnv(env); err != nil {
		return nil, err
	}
	f := &tcpFlow{env: env, cc: cc}
	if s.DelayedAck > 2 && env.Log != nil {
		fmt.Fprintf(env.Log, "flow %s: delayed_ack %d: Linux ACKs every second full-sized segment (or on its delayed-ACK timer); it has no setting for %d\n",
			s.Name, s.DelayedAck, s.DelayedAck)
	}
	if o := s.OnOff; o != nil {
		if o.SizeMin <= 0 || o.SizeMax < o.SizeMin || o.OffMean <= 0 {
			return nil, fmt.Errorf("flow %s: bad on/off parameters", s.Name)
		}
		f.onoff = sim.NewOnOffSource(env.Seed, s.Name, *o)
	}
	return f, nil
}

// checkEnv rejects an Env a flow cannot run in.
func checkEnv(env endpoint.Env) error {
	switch {
	case env.Src == nil || env.Dst == nil:
		return fmt.Errorf("flow %s: no source or destination host", env.Spec.Name)
	case env.Rec == nil:
		return fmt.Errorf("flow %s: no recorder", env.Spec.Name)
	}
	return nil
}

// Start configures both hosts, connects and starts sending, reading and
// sampling TCP_INFO.
func (f *tcpFlow) Start(ctx context.Context) error {
	if err := f.setSysctls(); err != nil {
		return err
	}
	if err := f.connect(ctx); err != nil {
		return err
	}
	got, err := congestion(f.snd)
	if err == nil && got != f.cc {
		err = fmt.Errorf("the socket runs %q, not %q", got, f.cc)
	}
	if err != nil {
		f.closeConns()
		return fmt.Errorf("flow %s: congestion control: %w", f.env.Spec.Name, err)
	}
	f.run, f.cancel = context.WithCancel(context.Background())
	f.goRun(f.receive)
	f.goRun(func() error { return f.send(f.run) })
	f.goRun(func() error { f.sample(f.run); return nil })
	return nil
}

// setSysctls applies sack and ecn in both hosts' namespaces, and keeps
// Linux from seeding a connection's ssthresh and RTT from an earlier one to
// the same peer (tcp_no_metrics_save), so every flow starts fresh as in the
// simulator even where a host is used again (the tests do).
func (f *tcpFlow) setSysctls() error {
	set := [][2]string{{"tcp_no_metrics_save", "1"}}
	if f.env.Spec.NoSACK {
		set = append(set, [2]string{"tcp_sack", "0"})
	}
	if f.env.Spec.ECN {
		set = append(set, [2]string{"tcp_ecn", "1"})
	}
	for _, h := range []endpoint.Host{f.env.Src, f.env.Dst} {
		for _, kv := range set {
			if err := writeSysctl(h, kv[0], kv[1]); err != nil {
				return fmt.Errorf("flow %s: %w", f.env.Spec.Name, err)
			}
		}
	}
	return nil
}

// connect listens in Dst, dials from Src and accepts.
func (f *tcpFlow) connect(ctx context.Context) error {
	name := f.env.Spec.Name
	var ln *net.TCPListener
	err := f.env.Dst.Do(func() error {
		lc := net.ListenConfig{Control: rcvBufControl(f.env.Spec.RcvWindow)}
		l, err := lc.Listen(ctx, "tcp", netip.AddrPortFrom(f.env.Dst.Addr(), 0).String())
		if err == nil {
			ln = l.(*net.TCPListener)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("flow %s: listen in %s: %w", name, f.env.Dst.Name(), err)
	}
	defer ln.Close() // one connection only
	err = f.env.Src.Do(func() error {
		d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(f.env.Src.Addr(), 0)),
			Timeout: 10 * time.Second, Control: senderControl(f.cc, f.env.Spec.MSS)}
		c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
		if err == nil {
			f.snd = c.(*net.TCPConn)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("flow %s: connect from %s: %w", name, f.env.Src.Name(), err)
	}
	if err := ln.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		f.closeConns()
		return err
	}
	c, err := ln.AcceptTCP()
	if err == nil && c.RemoteAddr().String() != f.snd.LocalAddr().String() {
		c.Close()
		err = fmt.Errorf("a stranger connected from %s", c.RemoteAddr())
	}
	if err != nil {
		f.closeConns()
		return fmt.Errorf("flow %s: accept: %w", name, err)
	}
	f.rcv = c
	return nil
}

// goRun runs fn in a goroutine Stop waits for, keeping its first error.
func (f *tcpFlow) goRun(fn func() error) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := fn(); err != nil {
			f.fail(err)
		}
	}()
}

// fail keeps the first error seen while running, unless the flow is being
// stopped (closing the sockets fails the blocked reads and writes).
func (f *tcpFlow) fail(err error) {
	f.errMu.Lock()
	defer f.errMu.Unlock()
	if f.err == nil && !f.stopping() {
		f.err = fmt.Errorf("flow %s: %w", f.env.Spec.Name, err)
		if f.env.Log != nil {
			fmt.Fprintln(f.env.Log, f.err)
		}
	}
}

func (f *tcpFlow) stopping() bool { return f.run.Err() != nil }

// receive reads until the connection closes, counting goodput.
func (f *tcpFlow) receive() error {
	quick := f.env.Spec.DelayedAck == 1
	buf := make([]byte, 64<<10)
	for {
		n, err := f.rcv.Read(buf)
		if n > 0 {
			f.env.Rec.Goodput(n)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("receiver: %w", err)
		}
		if quick {
			if err := setQuickAck(f.rcv); err != nil {
				return fmt.Errorf("receiver: TCP_QUICKACK: %w", err)
			}
		}
	}
}

// send writes forever (bulk) or files separated by idle periods (on/off)
// until Stop.
func (f *tcpFlow) send(ctx context.Context) error {
	buf := make([]byte, 64<<10)
	if f.onoff == nil {
		for {
			if _, err := f.snd.Write(buf); err != nil {
				return fmt.Errorf("sender: %w", err)
			}
		}
	}
	if !f.env.Spec.OnOff.StartOn && !sleep(ctx, f.onoff.Off()) {
		return nil
	}
	for {
		for left := f.onoff.Size(); left > 0; {
			n, err := f.snd.Write(buf[:min(left, len(buf))])
			if err != nil {
				return fmt.Errorf("sender: %w", err)
			}
			left -= n
		}
		if err := waitDrained(ctx, f.snd); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		f.files.Add(1)
		if !sleep(ctx, f.onoff.Off()) {
			return nil
		}
	}
}

// sample records the sender's cwnd and smoothed RTT from TCP_INFO.
func (f *tcpFlow) sample(ctx context.Context) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		info, err := tcpInfo(f.snd)
		if err != nil {
			return // closed by Stop
		}
		f.env.Rec.Cwnd(float64(info.Snd_cwnd) * float64(info.Snd_mss))
		if info.Rtt > 0 {
			f.env.Rec.RTT(time.Duration(info.Rtt) * time.Microsecond)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop ends the flow: the sender resets the connection (no lingering
// retransmissions after the run), the receiver closes, and Stop waits for
// the flow's goroutines.
func (f *tcpFlow) Stop() error {
	f.stopped.Do(func() {
		if f.cancel != nil {
			f.cancel()
		}
		f.closeConns()
		f.wg.Wait()
	})
	f.errMu.Lock()
	defer f.errMu.Unlock()
	return f.err
}

func (f *tcpFlow) closeConns() {
	if f.snd != nil {
		_ = f.snd.SetLinger(0)
		f.snd.Close()
	}
	if f.rcv != nil {
		f.rcv.Close()
	}
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
