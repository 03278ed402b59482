package rig

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// StopGrace is how long a server under test gets to exit on SIGTERM before it is killed.
const StopGrace = 10 * time.Second

// Process is a server we started, by PID.
type Process struct {
	Name string // names it in errors
	Log  string // its output, or "" if the caller took it elsewhere
	cmd  *exec.Cmd
	done chan error
}

// StartCommand starts cmd, named name in errors, with its output to a new file at logPath (or,
// with logPath "", wherever cmd.Stdout and cmd.Stderr already point), and reaps it when it exits.
//
// A cmd with SysProcAttr.Pdeathsig set (a server that must die with us: a kill -9 of the run
// skips every cleanup, and a server left behind keeps its namespace and ports) is forked from a
// locked OS thread, as the emulator's SFU flow always started its servers. The kernel sends that
// signal when the thread that forked the child exits, not the process. Go keeps a thread that
// was locked and then unlocked; it ends a thread only when a goroutine exits while still locked
// to it, as namespace helpers do with a thread they could not switch back, so only that could
// end such a server early.
func StartCommand(name string, cmd *exec.Cmd, logPath string) (*Process, error) {
	var logf *os.File
	if logPath != "" {
		var err error
		if logf, err = os.Create(logPath); err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = logf, logf
	}
	closeLog := func() {
		if logf != nil {
			logf.Close()
		}
	}
	var err error
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0 {
		runtime.LockOSThread()
		err = cmd.Start()
		runtime.UnlockOSThread()
	} else {
		err = cmd.Start()
	}
	if err != nil {
		closeLog()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Process{Name: name, Log: logPath, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); closeLog() }()
	return p, nil
}

// WaitHTTP waits until url answers 200 through client; it fails if the process exits first, or
// ctx ends, or 20 s pass.
func (p *Process) WaitHTTP(ctx context.Context, client *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited at start-up (%v)%s", p.Name, err, p.tail())
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer %s: %w%s", p.Name, url, ctx.Err(), p.tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Alive reports whether the server is still running.
func (p *Process) Alive() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return false
	default:
		return true
	}
}

// Stop ends the server: SIGTERM, then SIGKILL if it has not exited within grace.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Alive() {
		return nil
	}
	if _, _, ok := p.Terminate(grace); !ok {
		return fmt.Errorf("%s did not exit on SIGTERM within %v; killed", p.Name, grace)
	}
	return nil
}

// Terminate sends SIGTERM and waits up to limit for the server to exit: how long it took and its
// exit status (nil for status 0). A server still running after limit is killed, and ok is false.
func (p *Process) Terminate(limit time.Duration) (took time.Duration, status error, ok bool) {
	t0 := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return time.Since(t0), err, true
	case <-time.After(limit):
	}
	_ = p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
	return time.Since(t0), err, false
}

// Kill ends the server at once with SIGKILL, as a crash would (no cleanup of its own runs), and
// waits until it is gone.
func (p *Process) Kill() {
	if !p.Alive() {
		return
	}
	_ = p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
}

// tail is ": " and the end of the server's log, for error messages, or "" without one.
func (p *Process) tail() string {
	if p.Log == "" {
		return ""
	}
	return ": " + Tail(p.Log)
}

// Tail is the end of a log file, for error messages.
func Tail(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if len(s) > 800 {
		s = "…" + s[len(s)-800:]
	}
	return s
}
