//go:build linux

// Package ovs runs an Open vSwitch instance of its own (ovsdb-server and ovs-vswitchd with the
// userspace datapath, inside a network namespace, with a private run, database and log directory)
// and programs it with ovs-ofctl. Nothing it starts can collide with other OVS instances on the
// machine: every socket, pidfile and log lives in Config.Dir, and Close ends only the processes
// Start started, by PID.
//
// The bridge's OpenFlow management socket (MgmtTarget, "unix:DIR/BRIDGE.mgmt") is a file, so a
// controller in any namespace can program the switch through it.
package ovs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Config says where a switch runs.
type Config struct {
	// Namespace is the network namespace (a name under /var/run/netns) the daemons run in, and
	// where the ports added later must be; empty means the caller's namespace. The userspace
	// datapath makes the bridge's own port a tap device named after the bridge (and one named
	// ovs-netdev), so give every switch a namespace of its own rather than the machine's.
	Namespace string
	// Dir holds the database, sockets, pidfiles and logs (OVS_RUNDIR, OVS_DBDIR and OVS_LOGDIR).
	// It is created if missing. Keep it short: unix socket paths are limited to 107 bytes.
	Dir string
	// Bridge is the bridge's name (default "br0").
	Bridge string
}

// Switch is a running Open vSwitch instance with one bridge.
type Switch struct {
	cfg Config

	spawn *spawner // the daemons' parent thread

	mu       sync.Mutex
	db       *daemon
	vswitchd *daemon
	closed   bool
}

// startTimeout bounds how long each daemon may take to come up.
const startTimeout = 10 * time.Second

// Start creates the database, starts ovsdb-server and ovs-vswitchd in the namespace and creates
// the bridge: userspace datapath (datapath_type=netdev, no kernel module needed) and
// fail_mode=secure, with one flow, priority 0 actions=NORMAL.
//
// Why secure plus an explicit NORMAL flow: in standalone mode ovs-vswitchd adds its own NORMAL
// flow whenever it reconfigures a bridge without a controller (every database change), which
// would fight a controller that owns the table; in secure mode the table holds exactly what was
// programmed. The NORMAL flow makes the bridge a learning switch from the start (and again after
// Restart), so traffic flows before a controller programs it — the same state a controller that
// installed no drop rules leaves.
//
// The daemons are this process's children and die with it (see spawner).
func Start(ctx context.Context, cfg Config) (*Switch, error) {
	if cfg.Bridge == "" {
		cfg.Bridge = "br0"
	}
	if cfg.Dir == "" {
		return nil, errors.New("ovs: Config.Dir is required")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.Dir = dir
	if n := len(filepath.Join(dir, cfg.Bridge+".mgmt")); n > 107 {
		return nil, fmt.Errorf("ovs: %s is too long for a unix socket path (%d > 107 bytes)", dir, n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ovs: %w", err)
	}
	s := &Switch{cfg: cfg, spawn: newSpawner()}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := s.start(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Switch) start(ctx context.Context) error {
	dbFile := s.path("conf.db")
	_ = os.Remove(dbFile) // a fresh database every time: no bridges or ports from an earlier run
	if _, err := s.command(ctx, "ovsdb-tool", "create", dbFile, schemaPath); err != nil {
		return err
	}
	db, err := s.startDaemon("ovsdb-server", dbFile,
		"--remote=punix:"+s.path("db.sock"), "--no-chdir")
	if err != nil {
		return err
	}
	s.db = db
	if err := waitFile(ctx, s.path("db.sock"), db); err != nil {
		return err
	}
	// max-revalidator (default 500 ms) is the longest a revalidation round waits; a controller that
	// acknowledges rules once the datapath has them (WaitRevalidated) waits about that long.
	if _, err := s.vsctl(ctx, "--no-wait", "init", "--", "set", "Open_vSwitch", ".", "other_config:max-revalidator=100"); err != nil {
		return err
	}
	if err := s.startVswitchd(ctx); err != nil {
		return err
	}
	// Without --no-wait, ovs-vsctl waits until ovs-vswitchd has created the bridge.
	if _, err := s.vsctl(ctx, "add-br", s.cfg.Bridge, "--", "set", "bridge", s.cfg.Bridge,
		"datapath_type=netdev", "fail_mode=secure"); err != nil {
		return err
	}
	return s.baseFlow(ctx)
}

// startVswitchd starts ovs-vswitchd; its stale mgmt socket (after a kill) is replaced by its own.
func (s *Switch) startVswitchd(ctx context.Context) error {
	d, err := s.startDaemon("ovs-vswitchd", "unix:"+s.path("db.sock"), "--no-chdir")
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.vswitchd = d
	s.mu.Unlock()
	return nil
}

// baseFlow waits until the bridge answers OpenFlow and installs the priority-0 NORMAL flow.
func (s *Switch) baseFlow(ctx context.Context) error {
	c := s.Client()
	var err error
	for {
		if err = c.AddFlow(ctx, "priority=0,actions=NORMAL"); err == nil {
			return nil
		}
		if d := s.daemonVswitchd(); d != nil && d.exited() {
			return fmt.Errorf("ovs: ovs-vswitchd exited (log: %s): %w", s.path("ovs-vswitchd.log"), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ovs: bridge %s did not answer OpenFlow: %w", s.cfg.Bridge, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *Switch) daemonVswitchd() *daemon {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vswitchd
}

// VswitchdPID is ovs-vswitchd's process id (0 when it is not running), for tests and status.
func (s *Switch) VswitchdPID() int {
	if d := s.daemonVswitchd(); d != nil && !d.exited() {
		return d.cmd.Process.Pid
	}
	return 0
}

// Restart kills ovs-vswitchd (SIGKILL, as a crash would) and starts it again. The bridge and its
// ports come back from the database; the flow table comes back with the base NORMAL flow only, so
// a controller's rules are lost until it reinstalls them.
func (s *Switch) Restart(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("ovs: switch closed")
	}
	old := s.vswitchd
	s.vswitchd = nil
	s.mu.Unlock()
	if old != nil {
		old.kill()
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := s.startVswitchd(ctx); err != nil {
		return err
	}
	return s.baseFlow(ctx)
}

// Close stops ovs-vswitchd and ovsdb-server (only the processes Start started, by PID). The
// bridge's ports are removed with the switch; the veths themselves are the caller's. Dir is left
// in place with the logs.
func (s *Switch) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	vs, db := s.vswitchd, s.db
	s.mu.Unlock()
	if vs != nil {
		vs.stop()
	}
	if db != nil {
		db.stop()
	}
	s.spawn.close()
	return nil
}

// MgmtTarget is the bridge's OpenFlow management socket as ovs-ofctl takes it:
// "unix:DIR/BRIDGE.mgmt".
func (s *Switch) MgmtTarget() string { return "unix:" + s.path(s.cfg.Bridge+".mgmt") }

// Bridge returns the bridge's name.
func (s *Switch) Bridge() string { return s.cfg.Bridge }

// Dir returns the switch's directory (absolute).
func (s *Switch) Dir() string { return s.cfg.Dir }

// Client returns an OpenFlow client of the bridge (with ovs-vswitchd's control socket, for
// WaitRevalidated).
func (s *Switch) Client() *Client {
	c := NewClient(s.MgmtTarget())
	c.Unixctl = s.Unixctl()
	return c
}

// Unixctl is ovs-vswitchd's control socket (for ovs-appctl -t): DIR/ovs-vswitchd.ctl.
func (s *Switch) Unixctl() string { return s.path("ovs-vswitchd.ctl") }

func (s *Switch) path(name string) string { return filepath.Join(s.cfg.Dir, name) }

// waitFile waits until path exists (a daemon's socket), or the daemon exits, or ctx ends.
func waitFile(ctx context.Context, path string, d *daemon) error {
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if d.exited() {
			return fmt.Errorf("ovs: %s exited before creating %s: %v", d.name, path, d.err())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ovs: %s did not create %s: %w", d.name, path, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
