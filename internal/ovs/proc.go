//go:build linux

package ovs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// schemaPath is Debian's openvswitch-common copy of the database schema.
const schemaPath = "/usr/share/openvswitch/vswitch.ovsschema"

// daemon is an OVS daemon Start started as its own child process (no --detach), so that its PID is
// known without trusting a pidfile and it dies with the test or lab process that started it.
type daemon struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	werr error
}

// env points every OVS tool at the switch's directory, so that defaults (pidfiles, control
// sockets, the database, bridge mgmt sockets) never touch the system's /var/run/openvswitch.
func (s *Switch) env() []string {
	return append(os.Environ(), "OVS_RUNDIR="+s.cfg.Dir, "OVS_DBDIR="+s.cfg.Dir, "OVS_LOGDIR="+s.cfg.Dir)
}

// argv prefixes a command with `ip netns exec NS` when the switch has a namespace. ip execs the
// command in place, so the child's PID is the daemon's.
func (s *Switch) argv(name string, args ...string) []string {
	if s.cfg.Namespace == "" {
		return append([]string{name}, args...)
	}
	return append([]string{"ip", "netns", "exec", s.cfg.Namespace, name}, args...)
}

// command runs a short OVS tool in the namespace and returns its stdout; errors carry stderr.
func (s *Switch) command(ctx context.Context, name string, args ...string) (string, error) {
	argv := s.argv(name, args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = s.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("ovs: %s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// vsctl runs ovs-vsctl against the switch's database.
func (s *Switch) vsctl(ctx context.Context, args ...string) (string, error) {
	return s.command(ctx, "ovs-vsctl", append([]string{"--db=unix:" + s.path("db.sock"), "--timeout=10"}, args...)...)
}

// startDaemon starts name with its own pidfile, control socket and log file in Dir.
func (s *Switch) startDaemon(name string, args ...string) (*daemon, error) {
	args = append(args,
		"--pidfile="+s.path(name+".pid"), "--unixctl="+s.path(name+".ctl"),
		"--log-file="+s.path(name+".log"), "-vconsole:off")
	argv := s.argv(name, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = s.env()
	// Own process group (a terminal's ^C goes to the parent, which stops the daemons itself), and
	// killed if this process dies first: forked from the spawner's thread (see spawner).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := s.spawn.run(cmd.Start); err != nil {
		return nil, fmt.Errorf("ovs: start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		if err != nil && errb.Len() > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
		}
		d.werr = err
		close(d.done)
	}()
	return d, nil
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// err is the daemon's exit error (only after exited).
func (d *daemon) err() error {
	<-d.done
	return d.werr
}

// stop asks the daemon to exit (SIGTERM: it removes its sockets and pidfile) and kills it if it
// has not within 3 s.
func (d *daemon) stop() {
	if d.exited() {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(3 * time.Second):
		d.kill()
	}
}

// kill ends the daemon at once (SIGKILL) and waits for it.
func (d *daemon) kill() {
	if !d.exited() {
		_ = d.cmd.Process.Kill()
	}
	<-d.done
}
