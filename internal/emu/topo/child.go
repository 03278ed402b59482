package topo

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-rtc/strata/internal/emu/netem"
	"github.com/strata-rtc/strata/internal/sim"
)

// The links run in a process of their own: the program that builds the
// network re-executes itself (/proc/self/exe) with childEnv set, and this
// package's init turns that copy into the link emulator. The endpoints
// (Pion, the flows' own Go code) live in the parent and allocate; every
// garbage collection there would stop the links' threads or take the Go
// processors they need (measured: with four goroutines allocating beside
// them, 5 % of packets more than 0.5 ms late, up to 23 ms). The link
// process allocates nothing per packet, so it never collects. It exits when
// told to or when its parent goes (its stdin closes), and its TUN devices go
// with it.
const childEnv = "STRATA_EMU_LINK_PROCESS"

func init() {
	if os.Getenv(childEnv) == "1" {
		os.Exit(linkProcessMain(os.Stdin, os.Stdout))
	}
}

// hello is the parent's first message: what to build.
type hello struct {
	Spec Spec
	Pid  int   // the parent's: namespaces are named after it
	Seq  int64 // the network's number in the engine's process (namespace names)
}

type request struct {
	Op     string // "start", "links", "counters", "flow", "close"
	T0Mono int64  // start: time zero on CLOCK_MONOTONIC
	Flow   string
}

type reply struct {
	Err      string
	Links    []sim.LinkStats
	Counters []netem.Counters
	Flow     flowWire
}

// flowWire is the network side of a flow's statistics.
type flowWire struct {
	SentPackets, SentBytes, RecvPackets, RecvBytes int64
	Dropped, ControlDropped, Marked, Unmatched     int64
	QueueDelays                                    []float32
	BinSent, BinRecv                               []int64
	BinQDelay                                      []time.Duration
	BinQN, BinLost                                 []int32
	Classes                                        []ClassCounts
}

func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// linkProcessMain serves one network's links.
func linkProcessMain(in io.Reader, out io.Writer) int {
	debug.SetGCPercent(400) // little is allocated after set-up; collect even less
	w := bufio.NewWriter(out)
	dec, enc := gob.NewDecoder(bufio.NewReader(in)), gob.NewEncoder(w)
	send := func(r reply) bool { return enc.Encode(r) == nil && w.Flush() == nil }
	var h hello
	if err := dec.Decode(&h); err != nil {
		fmt.Fprintln(os.Stderr, "link process:", err)
		return 2
	}
	n := &Network{spec: h.Spec, pid: h.Pid, seq: h.Seq, nodes: map[string]*node{}, hosts: map[string]*Host{},
		flows: map[string]*flowState{}, byPair: map[pairKey]route{}}
	err := n.plan()
	if err == nil {
		err = n.createTUNs()
	}
	defer n.closeLinks()
	if !send(reply{Err: errString(err)}) || err != nil {
		return 1
	}
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			return 0 // the parent is gone: the deferred close removes the TUNs
		}
		var r reply
		switch req.Op {
		case "start":
			n.startLinks(time.Now().Add(-time.Duration(monoNow() - req.T0Mono)))
		case "links":
			r.Links = n.localLinkStats()
		case "counters":
			r.Counters = n.localCounters()
		case "flow":
			r.Flow, err = n.localFlow(req.Flow)
			r.Err = errString(err)
		case "close":
			r.Err = errString(n.closeLinks())
			send(r)
			return 0
		default:
			r.Err = "unknown request " + req.Op
		}
		if !send(r) {
			return 1
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// linkProcess is the parent's handle on the link process.
type linkProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	w     *bufio.Writer
	enc   *gob.Encoder
	dec   *gob.Decoder
	mu    sync.Mutex
	dead  error
}

// startLinkProcess starts the links of n in a process of their own and
// waits until their TUN devices exist.
func (n *Network) startLinkProcess() error {
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	// A group of its own: a Ctrl-C at the terminal reaches the engine, which
	// then still reads the links' statistics and closes them in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the link process: %w", err)
	}
	w := bufio.NewWriter(stdin)
	p := &linkProcess{cmd: cmd, stdin: stdin, w: w, enc: gob.NewEncoder(w), dec: gob.NewDecoder(bufio.NewReader(stdout))}
	n.proc = p
	if err := p.enc.Encode(hello{Spec: n.spec, Pid: n.pid, Seq: n.seq}); err != nil {
		return fmt.Errorf("link process: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("link process: %w", err)
	}
	var r reply
	if err := p.dec.Decode(&r); err != nil {
		return fmt.Errorf("link process: %w", err)
	}
	if r.Err != "" {
		return errors.New(r.Err)
	}
	return nil
}

// call sends one request and waits for its reply.
func (p *linkProcess) call(req request) (reply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var r reply
	if p.dead != nil {
		return r, p.dead
	}
	err := p.enc.Encode(req)
	if err == nil {
		err = p.w.Flush()
	}
	if err == nil {
		err = p.dec.Decode(&r)
	}
	if err != nil {
		p.dead = fmt.Errorf("link process: %w", err)
		return r, p.dead
	}
	if r.Err != "" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

// stop asks the link process to close its links and waits for it to exit
// (killing it if it does not within a few seconds).
func (p *linkProcess) stop() error {
	_, err := p.call(request{Op: "close"})
	_ = p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case werr := <-done:
		return errors.Join(err, werr)
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		return errors.Join(err, <-done, errors.New("link process did not exit; killed"))
	}
}
