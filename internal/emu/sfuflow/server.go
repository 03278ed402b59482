package sfuflow

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/rig"
)

// Ports inside the SFU's host namespace (its own: nothing else listens there).
const (
	apiPort    = 8088
	netctlPort = 9080
)

// process is one strata process in a host's namespace, ended by its PID.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan error
}

// startProcess runs the binary with args in h's namespace, its output to dir/name.log.
func startProcess(h endpoint.Host, dir, name, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// The process lives as long as the run, not as the context of the call that starts it.
	cmd := h.Command(context.Background(), bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Killed with us if we die (kill -9 of the run): the signal follows the thread that started
	// it, so start it from a locked thread, which Go keeps once unlocked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	err = cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); logf.Close() }()
	return p, nil
}

// waitHTTP waits until url answers 200 through client, or the process exits, or 20 s pass.
func (p *process) waitHTTP(ctx context.Context, client *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited at start-up (%v): %s", p.name, err, rig.Tail(p.log))
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
			return fmt.Errorf("%s did not answer %s: %w: %s", p.name, url, ctx.Err(), rig.Tail(p.log))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop ends the process by its PID: SIGTERM, SIGKILL after 5 s.
func (p *process) stop() error {
	select {
	case err := <-p.done:
		p.done <- err
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return nil
	case <-time.After(5 * time.Second):
	}
	_ = p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
	return errors.New(p.name + " did not exit on SIGTERM within 5 s; killed")
}
